/**
 * What every namespace the server creates at start must hold before a pod can run in it (the
 * controllers do the same for namespaces created later — serviceaccount, root-ca-cert-publisher):
 *
 *   ServiceAccount default        pods run as it unless they name another (ServiceAccount admission)
 *   ConfigMap kube-root-ca.crt    the cluster CA, projected into pods as ca.crt
 *
 * Idempotent; an existing object is left as it is (an admin may have changed the account).
 */
import type { Logger } from '@nodelet/base';
import { SYSTEM_PRIORITY_CLASSES } from '@nodelet/api';
import type { ServedResource, ServerContext } from './context.js';
import { admitCreate } from './handlers/admit.js';
import type { ApiObject } from './object.js';
import { StatusError } from './status.js';

export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export function rootCaConfigMap(namespace: string, caPem: string): ApiObject {
  return {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace, annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION } },
    data: { 'ca.crt': caPem },
  };
}

async function createIfMissing(ctx: ServerContext, served: ServedResource, obj: ApiObject): Promise<void> {
  if (await served.registry.find(obj.metadata.namespace, obj.metadata.name!)) return;
  try {
    await served.registry.create(admitCreate(ctx, served.def, structuredClone(obj)));
  } catch (err) {
    if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
  }
}

/** The provisioner name of nodelet's local-path StorageClass (controllers/volume/local-path-provisioner.ts). */
export const LOCAL_PATH_PROVISIONER = 'nodelet.io/local-path';

/**
 * The default StorageClass `local-path` (as k3s ships one): volumes are directories on the node
 * the first pod using the claim is scheduled to, so binding waits for that pod.
 */
export function localPathStorageClass(): ApiObject {
  return {
    apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass',
    metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
}

/** Creates the `local-path` StorageClass unless it exists (an admin may have changed or replaced it). */
export async function ensureDefaultStorageClass(ctx: ServerContext): Promise<void> {
  const classes = ctx.resource('storage.k8s.io', 'v1', 'storageclasses');
  if (classes) await createIfMissing(ctx, classes, localPathStorageClass());
}

export async function ensureNamespaceDefaults(ctx: ServerContext, namespaces: readonly string[], caPem: string | undefined, log: Logger): Promise<void> {
  const sas = ctx.resource('', 'v1', 'serviceaccounts')!;
  const cms = ctx.resource('', 'v1', 'configmaps')!;
  for (const ns of namespaces) {
    await createIfMissing(ctx, sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } });
    if (caPem) await createIfMissing(ctx, cms, rootCaConfigMap(ns, caPem));
  }
  log.debug({ namespaces }, 'Namespace defaults in place');
}

/**
 * The built-in PriorityClasses system-node-critical and system-cluster-critical (kube-apiserver's
 * scheduling bootstrap); created when missing at every start, so a deleted one comes back.
 */
export async function ensureSystemPriorityClasses(ctx: ServerContext): Promise<void> {
  const classes = ctx.resource('scheduling.k8s.io', 'v1', 'priorityclasses');
  if (!classes) return;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    await createIfMissing(ctx, classes, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description });
  }
}
