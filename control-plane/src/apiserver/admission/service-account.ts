/**
 * The ServiceAccount admission plugin (upstream plugin/pkg/admission/serviceaccount), for new
 * pods other than mirror pods:
 *
 *   - the pod's service account (`default` unless named) must exist in its namespace;
 *   - unless `automountServiceAccountToken: false` (on the pod, else on the account), a projected
 *     volume `kube-api-access-<5 chars>` — a 3607-second bound token, the cluster CA from the
 *     `kube-root-ca.crt` ConfigMap, the namespace from the downward API — is added and mounted
 *     read-only at /var/run/secrets/kubernetes.io/serviceaccount in every container, where
 *     client libraries (`loadFromCluster()`) look for it;
 *   - a pod that names no `imagePullSecrets` gets the account's (the agent pulls with the pod's only).
 *
 * Mutating: it changes the pod before it is stored.
 */
import { forbidden } from '../status.js';
import { delay } from '@nodelet/base';
import type { ServerContext } from '../context.js';
import { findMirrored } from '../mirror.js';
import { randomNameSuffix, type ApiObject, type Json } from '../object.js';
import type { AdmissionPlugin } from './types.js';
import { MIRROR_POD_ANNOTATION } from './node-restriction.js';

export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

/**
 * The account, looked up once — or, for `default`, up to 10 times 100–200 ms apart, as upstream:
 * the serviceaccount controller creates it right after the namespace, and a pod created in the
 * same breath should not fail for that.
 */
async function findServiceAccount(ctx: ServerContext, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
  const attempts = name === 'default' ? 10 : 1;
  for (let i = 0; i < attempts; i++) {
    if (i) await delay(100 + Math.floor(Math.random() * 100), ctx.shutdown);
    const sa = await findMirrored(ctx, ctx.resource('', 'v1', 'serviceaccounts')!, namespace, name);
    if (sa) return sa;
  }
  return undefined;
}

export const serviceAccountAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.operation !== 'CREATE' || r.subresource || r.def.group !== '' || r.def.plural !== 'pods' || !r.object) return;
  const pod = r.object;
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return;
  const spec = (pod.spec ?? {}) as Json;
  const name = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName ? spec.serviceAccountName : 'default';
  const sa = await findServiceAccount(ctx, r.namespace, name);
  if (!sa) {
    throw forbidden(`pods "${pod.metadata.name ?? ''}" is forbidden: error looking up service account ${r.namespace ?? ''}/${name}: serviceaccount "${name}" not found`);
  }
  const saPullSecrets = Array.isArray(sa.imagePullSecrets) ? (sa.imagePullSecrets as Json[]) : [];
  if ((!Array.isArray(spec.imagePullSecrets) || spec.imagePullSecrets.length === 0) && saPullSecrets.length > 0) {
    spec.imagePullSecrets = saPullSecrets.map((s) => ({ name: s.name }));
    pod.spec = spec;
  }
  const automount = (spec.automountServiceAccountToken as boolean | undefined) ?? (sa.automountServiceAccountToken as boolean | undefined) ?? true;
  if (!automount) return;
  const containers = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((k) => (Array.isArray(spec[k]) ? (spec[k] as Json[]) : []));
  // A pod that already mounts something there keeps it (upstream skips the volume then).
  if (containers.some((c) => ((c.volumeMounts ?? []) as Json[]).some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH))) return;
  const volumes = (Array.isArray(spec.volumes) ? spec.volumes : []) as Json[];
  let volumeName: string;
  do volumeName = `kube-api-access-${randomNameSuffix()}`;
  while (volumes.some((v) => v.name === volumeName));
  volumes.push({
    name: volumeName,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  });
  spec.volumes = volumes;
  for (const c of containers) c.volumeMounts = [...((c.volumeMounts ?? []) as Json[]), { name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
  pod.spec = spec;
};
