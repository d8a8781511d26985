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
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { AgentError, describeError } from '@nodelet/base';
import { dns1123LabelProblem, invalidValue, validatePodVolumes, type DownwardAPIVolumeFile, type KeyToPath, type Pod, type Volume } from '@nodelet/api/agent';
import { parseQuantity } from '../util/quantity.js';
import { writeAtomically, type FileProjection } from './atomic-writer.js';
import { isSafePodUid, podDir, volumeDir } from './container-config.js';
import { unmountAllUnder, type Mounter } from './mount.js';
import { resourceFieldValue } from './env.js';
import type { TokenSource } from './token-manager.js';
import { checkHostPath } from './host-path.js';
import { unsupportedVolumeProblems } from './volume-kinds.js';

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

const DEFAULT_MODE = 0o644;
const EMPTY_DIR_MODE = 0o777;
const KEYED_DIR_MODE = 0o755;
const TMPFS_OPTIONS = ['nosuid', 'nodev'];

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

function payloadOf(kind: 'configmap' | 'secret', data: Record<string, Uint8Array>, src: { items?: KeyToPath[]; defaultMode?: number; optional?: boolean }): Map<string, FileProjection> {
  const mode = src.defaultMode ?? DEFAULT_MODE;
  const out = new Map<string, FileProjection>();
  if (!src.items?.length) {
    for (const [key, value] of Object.entries(data)) out.set(key, { data: value, mode });
    return out;
  }
  for (const item of src.items) {
    const value = data[item.key];
    if (value === undefined) {
      if (src.optional) continue;
      throw new AgentError('ERR_FAILED_PRECONDITION', kind === 'configmap' ? `configmap references non-existent config key: ${item.key}` : `references non-existent secret key: ${item.key}`);
    }
    out.set(item.path, { data: value, mode: item.mode ?? mode });
  }
  return out;
}

/** mkdir -p; the mode is set with chmod (not subject to the agent's umask), only when created. */
async function ensureDir(dir: string, mode: number): Promise<void> {
  if ((await mkdir(dir, { recursive: true })) !== undefined) await chmod(dir, mode);
}

async function ensureTmpfs(ctx: VolumeContext, dir: string, options: string[], signal: AbortSignal): Promise<void> {
  await ensureDir(dir, KEYED_DIR_MODE);
  if (!(await ctx.mounter.isTmpfsMountPoint(dir))) await ctx.mounter.mountTmpfs(dir, [...options, ...TMPFS_OPTIONS], signal);
}

/**
 * Awaits every step (none is left running behind the caller) and throws the first failure in
 * the given order, as a sequential loop would have. The steps are independent: the mount under
 * a volume and the API reads of its contents, the volumes of one pod.
 */
async function allSettledOrThrow<T extends readonly unknown[]>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(steps);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

async function prepareKeyed(pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  const ns = pod.metadata.namespace ?? 'default';
  const isSecret = !!v.secret;
  const src = (v.secret ?? v.configMap)!;
  const name = v.secret?.secretName ?? v.configMap?.name ?? '';
  // Secrets never touch the node's disk: the tmpfs is there before the first byte is written.
  // The mount and the API read run at once; nothing is written before both are done.
  const [, data] = await allSettledOrThrow<[void, Record<string, Uint8Array> | undefined]>([
    isSecret ? ensureTmpfs(ctx, dir, ['mode=0755'], signal) : ensureDir(dir, KEYED_DIR_MODE),
    isSecret ? ctx.reader.secret(ns, name, signal) : ctx.reader.configMap(ns, name, signal),
  ]);
  if (!data && !src.optional) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `${isSecret ? 'secret' : 'configmap'} "${name}" not found (volume "${v.name}")`);
  }
  const payload = payloadOf(isSecret ? 'secret' : 'configmap', data ?? {}, src);
  await writeAtomically(dir, payload, { fsGroup: pod.spec?.securityContext?.fsGroup, now: ctx.now });
}

/** The downward API's file contents (fieldRef / resourceFieldRef, the subset volumes allow). */
function downwardValue(pod: Pod, item: DownwardAPIVolumeFile): string {
  if (item.resourceFieldRef) {
    const c = pod.spec?.containers.find((x) => x.name === item.resourceFieldRef!.containerName) ?? pod.spec?.containers[0];
    if (!c) throw new AgentError('ERR_FAILED_PRECONDITION', `resourceFieldRef of "${item.path}" names no container`);
    return resourceFieldValue(pod, c, { ...item.resourceFieldRef, divisor: item.resourceFieldRef.divisor });
  }
  const path = item.fieldRef?.fieldPath ?? '';
  // kubelet's fieldpath.FormatMap: sorted key="value" lines.
  const formatMap = (m: Record<string, string> | undefined): string =>
    Object.keys(m ?? {}).sort().map((k) => `${k}=${JSON.stringify(m![k])}`).join('\n');
  const one = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (one) return (one[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[one[2]!] ?? '';
  switch (path) {
    case 'metadata.name': return pod.metadata.name ?? '';
    case 'metadata.namespace': return pod.metadata.namespace ?? '';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    case 'metadata.labels': return formatMap(pod.metadata.labels);
    case 'metadata.annotations': return formatMap(pod.metadata.annotations);
    default: throw new AgentError('ERR_FAILED_PRECONDITION', `unsupported downward API fieldPath "${path}" in a volume`);
  }
}

function addDownward(out: Map<string, FileProjection>, pod: Pod, items: DownwardAPIVolumeFile[] | undefined, mode: number): void {
  for (const item of items ?? []) out.set(item.path, { data: Buffer.from(downwardValue(pod, item)), mode: item.mode ?? mode });
}

/**
 * A projected volume's files from all its sources (later sources win on a path clash, as kubelet).
 * The sources are read at once (kube-api-access: the token request and the CA ConfigMap) and
 * merged in their order.
 */
async function projectedPayload(pod: Pod, v: Volume, ctx: VolumeContext, signal: AbortSignal): Promise<Map<string, FileProjection>> {
  const ns = pod.metadata.namespace ?? 'default';
  const mode = v.projected?.defaultMode ?? DEFAULT_MODE;
  const one = async (src: NonNullable<NonNullable<Volume['projected']>['sources']>[number]): Promise<Map<string, FileProjection>> => {
    const files = new Map<string, FileProjection>();
    if (src.secret || src.configMap) {
      const isSecret = !!src.secret;
      const ref = (src.secret ?? src.configMap)!;
      const data = isSecret ? await ctx.reader.secret(ns, ref.name ?? '', signal) : await ctx.reader.configMap(ns, ref.name ?? '', signal);
      if (!data && !ref.optional) throw new AgentError('ERR_FAILED_PRECONDITION', `${isSecret ? 'secret' : 'configmap'} "${ref.name ?? ''}" not found (volume "${v.name}")`);
      return payloadOf(isSecret ? 'secret' : 'configmap', data ?? {}, { ...ref, defaultMode: mode });
    } else if (src.downwardAPI) {
      addDownward(files, pod, src.downwardAPI.items, mode);
    } else if (src.serviceAccountToken) {
      if (!ctx.tokens) throw new AgentError('ERR_FAILED_PRECONDITION', `volume "${v.name}": no service-account token source configured`);
      const t = src.serviceAccountToken;
      const token = await ctx.tokens.podToken(pod, { audience: t.audience, expirationSeconds: t.expirationSeconds ?? 3600 }, signal);
      files.set(t.path, { data: Buffer.from(token), mode });
    }
    return files;
  };
  const parts = await allSettledOrThrow((v.projected?.sources ?? []).map(one));
  const out = new Map<string, FileProjection>();
  for (const files of parts) for (const [p, f] of files) out.set(p, f);
  return out;
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

async function setUpVolume(pod: Pod, v: Volume, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  if (v.hostPath) return checkHostPath(v.hostPath);
  const dir = volumeDir(ctx.rootDir, pod.metadata.uid!, v);
  if (!dir) return;
  if (v.emptyDir?.medium === 'Memory') {
    const size = v.emptyDir.sizeLimit === undefined ? [] : [`size=${Math.floor(parseQuantity(v.emptyDir.sizeLimit))}`];
    await ensureTmpfs(ctx, dir, ['mode=0777', ...size], signal);
  } else if (v.emptyDir) {
    await ensureDir(dir, EMPTY_DIR_MODE);
  } else if (v.projected) {
    // May hold secrets and tokens: on tmpfs before anything is written, like a secret volume.
    // The mount and the reads of the sources run at once.
    const [, files] = await allSettledOrThrow<[void, Map<string, FileProjection>]>([ensureTmpfs(ctx, dir, ['mode=0755'], signal), projectedPayload(pod, v, ctx, signal)]);
    await writeAtomically(dir, files, { fsGroup: pod.spec?.securityContext?.fsGroup, now: ctx.now });
  } else if (v.persistentVolumeClaim) {
    await mountClaim(pod, v, dir, ctx, signal);
  } else if (v.downwardAPI) {
    await ensureDir(dir, KEYED_DIR_MODE);
    const files = new Map<string, FileProjection>();
    addDownward(files, pod, v.downwardAPI.items, v.downwardAPI.defaultMode ?? DEFAULT_MODE);
    await writeAtomically(dir, files, { fsGroup: pod.spec?.securityContext?.fsGroup, now: ctx.now });
  } else {
    await prepareKeyed(pod, v, dir, ctx, signal);
  }
}

/**
 * A claim's volume: its PersistentVolume's node directory (created first for `DirectoryOrCreate`,
 * mode 0755 as kubelet's hostPath) bind-mounted on the volume's mount point, once. The claim is
 * resolved on every sync so an unbound claim keeps the pod waiting, not failing.
 */
async function mountClaim(pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  if (!ctx.reader.claimVolume) throw new AgentError('ERR_FAILED_PRECONDITION', `volume "${v.name}": persistentVolumeClaim volumes are not supported here`);
  await ensureDir(dir, 0o750);
  if ((await ctx.mounter.mountPointsUnder(dir)).includes(dir)) return;
  const src = await ctx.reader.claimVolume(pod.metadata.namespace ?? 'default', v.persistentVolumeClaim!.claimName, signal);
  if (!isAbsolute(src.path) || src.path.split('/').includes('..')) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `volume "${v.name}": the claim's volume path ${JSON.stringify(src.path)} is not an absolute path without '..'`);
  }
  if (src.create) await ensureDir(src.path, 0o755);
  else if (!(await stat(src.path).then((st) => st.isDirectory(), () => false))) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `volume "${v.name}": ${src.path} is not a directory on this node`);
  }
  await ctx.mounter.bindMount(src.path, dir, signal);
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
  let names: string[];
  try {
    names = await readdir(join(rootDir, 'pods'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
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
