/**
 * The pod volumes the agent materialises on the node before containers start (the kubelet's
 * empty-dir, configmap and secret plugins), refreshed on every sync:
 *
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>    directory 0777 (own tmpfs for medium: Memory)
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~configmap/<name>    atomic-writer.ts layout, on disk
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~secret/<name>       atomic-writer.ts layout, on its own tmpfs
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~projected/<name>    secrets, configmaps, downward API and
 *                                                                   service-account tokens (token-manager.ts), on tmpfs
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~downward-api/<name> the pod's own metadata and resources
 *   <root-dir>/pods/<uid>/volume-subpaths/<volume>/<container>/<i>  subPath bind mounts (subpath.ts)
 *
 *   <root-dir>/pods/<uid>/volumes/kubernetes.io~local-volume/<name> a bind mount of the claim's
 *                                                                   PersistentVolume directory
 *
 * hostPath is mounted as given after its `type` is checked (host-path.ts). A source this node cannot
 * provide (volume-kinds.ts) fails the whole pod before anything is created. Every name joined into these paths is checked first with the API
 * server's own validation (static pods never pass the API server): a pod that fails it gets no
 * directory at all. Removal unmounts everything below the pod directory before deleting it, and
 * housekeeping removes pod directories nobody wants any more (after an agent restart, or a crash
 * between mount and sandbox), so neither tmpfs nor bind mounts leak.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, describeError, readdirIfExists } from '@nodelet/base';
import { dns1123LabelProblem, invalidValue, validatePodVolumes, type Pod, type Volume } from '@nodelet/api/agent';
import { isSafePodUid, podDir, volumeHostPath } from './container-config.js';
import { unmountAllUnder, type Mounter } from './mount.js';
import type { TokenSource } from './token-manager.js';
import { unsupportedVolumeProblems, volumeKindOf } from './volume-kinds.js';
import { allSettledOrThrow } from './volume-plugins.js';

/** ConfigMap/Secret contents as bytes (binaryData and Secret data stay binary). Undefined when absent. */
export interface VolumeSourceReader {
  configMap(namespace: string, name: string, signal: AbortSignal): Promise<Record<string, Uint8Array> | undefined>;
  secret(namespace: string, name: string, signal: AbortSignal): Promise<Record<string, Uint8Array> | undefined>;
  /**
   * The node directory behind a bound claim (PVC → PV → hostPath or local path). Throws
   * ERR_FAILED_PRECONDITION while the claim is missing or unbound, or its volume is of a kind the
   * agent cannot mount. Absent: claims are not supported.
   */
  claimVolume?(namespace: string, claimName: string, signal: AbortSignal): Promise<ClaimVolume>;
}

/** Where a claim's data lives on this node, and whether to create it (hostPath `DirectoryOrCreate`). */
export interface ClaimVolume {
  path: string;
  create: boolean;
}

export interface VolumeContext {
  rootDir: string;
  reader: VolumeSourceReader;
  mounter: Mounter;
  /** Service-account tokens for projected volumes (none: a projected token source fails). */
  tokens?: TokenSource;
  /** Names the atomic writer's version directories. */
  now?: () => Date;
}

/**
 * Why the agent refuses to lay out `pod` on disk: field errors in the API server's words for
 * volumes, volumeMounts and container names (all joined into host paths), and an unusable UID.
 */
export function podPathProblems(pod: Pod): string[] {
  const out = validatePodVolumes(pod.spec, 'spec');
  for (const list of ['initContainers', 'containers'] as const) {
    (pod.spec?.[list] ?? []).forEach((c, i) => {
      const p = typeof c?.name === 'string' ? dns1123LabelProblem(c.name) : 'must be a string';
      if (p) out.push(invalidValue(`spec.${list}[${i}].name`, c?.name, p));
    });
  }
  if (!isSafePodUid(pod.metadata.uid)) out.push(invalidValue('metadata.uid', pod.metadata.uid, 'must be a UID'));
  return out.map((e) => `${e.field}: ${e.message}`);
}

/**
 * Creates or refreshes every volume of the pod. Idempotent; called on every sync, so a
 * ConfigMap/Secret edit (a key added, changed or removed) reaches the files. Throws
 * ERR_INVALID_ARGUMENT for a pod {@link podPathProblems} refuses, ERR_FAILED_PRECONDITION for a
 * missing non-optional source.
 */
export async function preparePodVolumes(pod: Pod, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  const problems = podPathProblems(pod);
  if (problems.length) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid pod spec: ${problems.join('; ')}`);
  const unsupported = unsupportedVolumeProblems(pod.spec?.volumes);
  if (unsupported.length) throw new AgentError('ERR_FAILED_PRECONDITION', unsupported.join('; '));
  // Each volume has its own directory and sources: they are prepared at once, and the first
  // failure in spec order is the one reported.
  await allSettledOrThrow((pod.spec?.volumes ?? []).map((v) => prepareVolume(pod, v, ctx, signal)));
}

/** One volume of the pod, created or refreshed (the steps of {@link preparePodVolumes}). */
async function prepareVolume(pod: Pod, v: Volume, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  try {
    await setUpVolume(pod, v, ctx, signal);
  } catch (err) {
    if (signal.aborted || !(err instanceof AgentError)) throw err;
    // kubelet's operation executor words every volume's failure this way in its FailedMount events.
    throw new AgentError(err.code, `MountVolume.SetUp failed for volume "${v.name}" : ${err.message}`, { cause: err, retryable: err.retryable });
  }
}

/** One volume, created or refreshed by its kind's set-up (volume-kinds.ts). */
async function setUpVolume(pod: Pod, v: Volume, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  const kind = volumeKindOf(v);
  const dir = volumeHostPath(ctx.rootDir, pod.metadata.uid!, v);
  // preparePodVolumes refuses a pod with any volume the table lacks before setting up one.
  if (!kind || dir === undefined) throw new AgentError('ERR_INTERNAL', `volume "${v.name}" cannot be provided on this node`);
  await kind.setUp(pod, v, dir, ctx, signal);
}

/**
 * Unmounts everything below `<root-dir>/pods/<uid>` (secret tmpfs, subPath bind mounts), then
 * removes it. Refuses to delete while anything is still mounted (rm would reach through a bind
 * mount into a volume or the host). Idempotent.
 */
export async function removePodDir(rootDir: string, uid: string, mounter: Mounter, signal: AbortSignal): Promise<void> {
  const dir = podDir(rootDir, uid);
  await unmountAllUnder(mounter, dir, signal);
  await rm(dir, { recursive: true, force: true });
}

/**
 * Removes the directory of every pod UID under `<root-dir>/pods` that `keep` does not claim
 * (kubelet cleanupOrphanedPodDirs). Entries that are not pod UIDs are left alone. Returns the
 * UIDs removed; a failure on one directory does not stop the others, all are reported after.
 */
export async function cleanupOrphanedPodDirs(rootDir: string, keep: (uid: string) => boolean, mounter: Mounter, signal: AbortSignal): Promise<string[]> {
  const names = await readdirIfExists(join(rootDir, 'pods'));
  const removed: string[] = [];
  const failed: string[] = [];
  for (const uid of names) {
    if (!isSafePodUid(uid) || keep(uid)) continue;
    signal.throwIfAborted();
    try {
      await removePodDir(rootDir, uid, mounter, signal);
      removed.push(uid);
    } catch (err) {
      failed.push(`"${uid}": ${describeError(err)}`);
    }
  }
  if (failed.length) throw new AgentError('ERR_INTERNAL', `orphaned pod directories not removed: ${failed.join('; ')}`);
  return removed;
}
