/**
 * Static pods from `--pod-manifest-path` (kubelet config/file.go) and their mirror pods
 * (pod/mirror_client.go).
 *
 * Every `fileCheckFrequency` the directory is read; each *.yaml/*.yml/*.json file holds one Pod.
 * The agent names it `<name>-<node>`, gives it a UID derived from the file content and the node (so
 * the same manifest keeps its UID across agent restarts, and an edit makes it a new pod), and
 * publishes a mirror pod in the API with annotation `kubernetes.io/config.mirror`, which the agent
 * never runs itself: it only carries the static pod's status for kubectl.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describeError, hasCode, readdirIfExists, type Logger } from '@nodelet/base';
import { PODS, type ApiClient, type Pod } from '@nodelet/api/agent';
import { CONFIG_HASH, CONFIG_MIRROR, CONFIG_SOURCE } from '../kubecontainer/pod-update.js';

/**
 * Parses one manifest into the static pod the agent runs. Throws with the file named. The pod
 * defaulting and validation come from the package root, loaded on the first manifest: a node
 * without static pods never loads the server's whole-object validation (`@nodelet/api/agent`).
 */
export async function staticPodFromManifest(text: string, file: string, nodeName: string): Promise<Pod> {
  let doc: unknown;
  try {
    doc = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new Error(`static pod ${file}: not valid YAML/JSON: ${describeError(err)}`);
  }
  const pod = doc as Pod;
  if (!pod || typeof pod !== 'object' || pod.kind !== 'Pod' || !pod.metadata?.name || !pod.spec?.containers?.length) {
    throw new Error(`static pod ${file}: must be a Pod with metadata.name and at least one container`);
  }
  const uid = createHash('md5').update(nodeName).update(text).digest('hex');
  const uuid = `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20, 32)}`;
  const { defaultPodSpec, validateObjectMeta, validatePodSpec } = await import('@nodelet/api');
  defaultPodSpec(pod.spec as unknown as Record<string, unknown>);
  // Static pods never pass the API server: the agent runs its validation (kubelet config
  // filterInvalidPods), so names that become host paths (volumes, containers, the pod's own) are checked.
  const errs = [
    ...validateObjectMeta({ ...pod.metadata, namespace: pod.metadata.namespace ?? 'default' }, { namespaced: true }),
    ...validatePodSpec(pod.spec, 'spec'),
  ];
  if (errs.length) throw new Error(`static pod ${file}: invalid: ${errs.map((e) => `${e.field}: ${e.message}`).join('; ')}`);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...pod.metadata,
      name: `${pod.metadata.name}-${nodeName}`,
      namespace: pod.metadata.namespace ?? 'default',
      uid: uuid,
      annotations: { ...(pod.metadata.annotations ?? {}), [CONFIG_SOURCE]: 'file', [CONFIG_HASH]: uuid },
      creationTimestamp: undefined,
    },
    spec: { ...pod.spec, nodeName },
  };
}

/** Reads every manifest of the directory. Bad files are reported and skipped. */
export async function readStaticPods(dir: string, nodeName: string, log: Logger): Promise<Pod[]> {
  const names = (await readdirIfExists(dir)).filter((n) => /\.(ya?ml|json)$/.test(n) && !n.startsWith('.')).sort();
  const pods: Pod[] = [];
  for (const n of names) {
    try {
      pods.push(await staticPodFromManifest(await readFile(join(dir, n), 'utf8'), n, nodeName));
    } catch (err) {
      log.warn({ file: n, err: describeError(err) }, 'Static pod manifest skipped');
    }
  }
  return pods;
}

/** The mirror pod of a static pod, as created in the API. */
export function mirrorPodFor(pod: Pod, nodeUid: string): Pod {
  const hash = pod.metadata.annotations?.[CONFIG_HASH] ?? pod.metadata.uid!;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      labels: pod.metadata.labels,
      annotations: { ...(pod.metadata.annotations ?? {}), [CONFIG_MIRROR]: hash },
      // NodeRestriction admits a node's pod only as a mirror owned by (the UID of) its own Node.
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: pod.spec!.nodeName!, uid: nodeUid, controller: true }],
    },
    spec: pod.spec,
  };
}

/**
 * Creates the mirror pod when missing; replaces a mirror pod of an older manifest version.
 * Returns the mirror pod's UID when it exists afterwards. Before the Node is registered (no UID
 * yet) nothing is created: the next sync tries again.
 */
export async function ensureMirrorPod(api: ApiClient, pod: Pod, signal: AbortSignal, nodeUid?: string): Promise<string | undefined> {
  if (!nodeUid) return undefined;
  const ns = pod.metadata.namespace!;
  const name = pod.metadata.name!;
  const hash = pod.metadata.annotations?.[CONFIG_HASH];
  try {
    const existing = await api.get(PODS, name, { namespace: ns, signal });
    if (existing.metadata.annotations?.[CONFIG_MIRROR] === hash && !existing.metadata.deletionTimestamp) return existing.metadata.uid;
    await api.delete(PODS, name, { namespace: ns, gracePeriodSeconds: 0, preconditions: { uid: existing.metadata.uid }, signal });
  } catch (err) {
    if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
  }
  try {
    const created = await api.create(PODS, mirrorPodFor(pod, nodeUid), { namespace: ns, signal });
    return created.metadata.uid;
  } catch (err) {
    if (hasCode(err, 'ERR_ALREADY_EXISTS')) return undefined;
    throw err;
  }
}

/** Deletes the mirror pod of a static pod that is gone from the directory. */
export async function deleteMirrorPod(api: ApiClient, pod: Pod, signal: AbortSignal): Promise<void> {
  try {
    await api.delete(PODS, pod.metadata.name!, { namespace: pod.metadata.namespace!, gracePeriodSeconds: 0, signal });
  } catch (err) {
    if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
  }
}
