/**
 * How each volume kind of volume-kinds.ts is created or refreshed in its directory (kubelet's
 * empty-dir, configmap, secret, projected, downward-api and local-volume plugins): the layout is
 * described in volumes.ts, which calls these through the table.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { AgentError } from '@nodelet/base';
import type { DownwardAPIVolumeFile, KeyToPath, Pod, Volume } from '@nodelet/api/agent';
import { parseQuantity } from '../util/quantity.js';
import { writeAtomically, type FileProjection } from './atomic-writer.js';
import { resourceFieldValue } from './env.js';
import type { VolumeContext } from './volumes.js';

const DEFAULT_MODE = 0o644;
const EMPTY_DIR_MODE = 0o777;
const KEYED_DIR_MODE = 0o755;
const TMPFS_OPTIONS = ['nosuid', 'nodev'];

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
export async function allSettledOrThrow<T extends readonly unknown[]>(steps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const results = await Promise.allSettled(steps);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** A configMap or secret volume: the object's keys as files, written atomically (a secret's on a tmpfs). */
export async function prepareKeyed(pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
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
 * A claim's volume: its PersistentVolume's node directory (created first for `DirectoryOrCreate`,
 * mode 0755 as kubelet's hostPath) bind-mounted on the volume's mount point, once. The claim is
 * resolved on every sync so an unbound claim keeps the pod waiting, not failing.
 */
export async function mountClaim(pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
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

/** An emptyDir: a directory 0777, on its own tmpfs (sized by sizeLimit) for medium Memory. */
export async function setUpEmptyDir(_pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  if (v.emptyDir?.medium === 'Memory') {
    const size = v.emptyDir.sizeLimit === undefined ? [] : [`size=${Math.floor(parseQuantity(v.emptyDir.sizeLimit))}`];
    await ensureTmpfs(ctx, dir, ['mode=0777', ...size], signal);
  } else {
    await ensureDir(dir, EMPTY_DIR_MODE);
  }
}

/** A projected volume: its sources' files, written atomically on a tmpfs. */
export async function setUpProjected(pod: Pod, v: Volume, dir: string, ctx: VolumeContext, signal: AbortSignal): Promise<void> {
  // May hold secrets and tokens: on tmpfs before anything is written, like a secret volume.
  // The mount and the reads of the sources run at once.
  const [, files] = await allSettledOrThrow<[void, Map<string, FileProjection>]>([ensureTmpfs(ctx, dir, ['mode=0755'], signal), projectedPayload(pod, v, ctx, signal)]);
  await writeAtomically(dir, files, { fsGroup: pod.spec?.securityContext?.fsGroup, now: ctx.now });
}

/** A downwardAPI volume: the pod's own fields as files, written atomically. */
export async function setUpDownwardAPI(pod: Pod, v: Volume, dir: string, ctx: VolumeContext): Promise<void> {
  await ensureDir(dir, KEYED_DIR_MODE);
  const files = new Map<string, FileProjection>();
  addDownward(files, pod, v.downwardAPI?.items, v.downwardAPI?.defaultMode ?? DEFAULT_MODE);
  await writeAtomically(dir, files, { fsGroup: pod.spec?.securityContext?.fsGroup, now: ctx.now });
}
