/**
 * subPath mounts that cannot be steered out of their volume (CVE-2017-1002101: container A makes
 * `/data/x -> /` in a shared emptyDir; container B mounts subPath `x` and would get the node's
 * root). The kubelet's approach (pkg/volume/util/subpath/subpath_linux.go), in Node:
 *
 *   1. expand subPathExpr; refuse an absolute path or a '..' element
 *   2. create missing directories one component at a time, never through a symlink
 *   3. realpath(volume/subPath) must be the volume or below it ("escapes the volume" otherwise);
 *      symlinks that stay inside (a configMap key -> ..data/key) are fine
 *   4. open that resolved path again, one component at a time from the volume root, with
 *      O_PATH|O_NOFOLLOW relative to the parent's descriptor (`/proc/self/fd/<parent>/<name>`):
 *      a component that became a symlink since step 3 is refused
 *   5. bind-mount `/proc/<agent pid>/fd/<n>` (the descriptor, not a path) on
 *      `<root-dir>/pods/<uid>/volume-subpaths/<volume>/<container>/<mount index>`
 *   6. check the target now is that file (same device and inode) and hand the target to CRI
 *
 * After step 5 nothing a container does to the volume changes what the container runtime mounts:
 * the target is a mount of an inode, in a directory no container can reach, so there is no
 * window between our check and the runtime's bind mount. The window left is between steps 3
 * and 4, and step 4 detects it. The bind mounts are removed with the pod directory (volumes.ts).
 */
import { constants } from 'node:fs';
import { mkdir, open, realpath, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { AgentError, isAgentError } from '@nodelet/base';
import { localDescendingPathProblems, type Container, type Pod } from '@nodelet/api/agent';
import { podDir, volumeHostPath } from './container-config.js';
import type { EnvVarValue } from './env.js';
import { unmountAllUnder, type Mounter } from './mount.js';

/** O_PATH on Linux (x86_64 and arm64 share the asm-generic value); Node does not export it. */
const O_PATH = 0o10000000;
const WALK = O_PATH | constants.O_NOFOLLOW;

export interface SubPathRequest {
  /** The volume directory on the node (for hostPath, the host path itself). */
  volumeRoot: string;
  /** subPath as written, or subPathExpr after expansion. */
  subPath: string;
  /** Where the verified subPath is bind-mounted (the path given to CRI). */
  target: string;
  /** For messages: `volumeMount "<volume>" of container "<container>"`. */
  volume: string;
  container: string;
}

function fail(r: SubPathRequest, why: string): AgentError {
  return new AgentError('ERR_FAILED_PRECONDITION', `failed to prepare subPath for volumeMount "${r.volume}" of container "${r.container}": ${why}`);
}

const escapes = (r: SubPathRequest): AgentError => fail(r, `subPath "${r.subPath}" escapes the volume "${r.volume}"`);
const within = (root: string, p: string): boolean => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** Opens `name` in the directory of `parent` without following a symlink there; refuses links. */
async function openChild(parent: FileHandle, name: string, r: SubPathRequest): Promise<FileHandle> {
  const fh = await open(`/proc/self/fd/${parent.fd}/${name}`, WALK);
  const st = await fh.stat().catch(async (err: unknown) => {
    await fh.close();
    throw err;
  });
  if (st.isSymbolicLink()) {
    await fh.close();
    throw escapes(r);
  }
  return fh;
}

/** Walks `parts` below `root` (already resolved) and returns the last handle; closes the others. */
async function walk(root: string, parts: readonly string[], r: SubPathRequest, create?: number): Promise<FileHandle> {
  let cur = await open(root, WALK | constants.O_DIRECTORY);
  try {
    for (const name of parts) {
      if (create !== undefined) {
        try {
          await mkdir(`/proc/self/fd/${cur.fd}/${name}`);
          // fchmod needs a real descriptor (not O_PATH); O_NOFOLLOW|O_DIRECTORY fails on a swapped-in link.
          const dir = await open(`/proc/self/fd/${cur.fd}/${name}`, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
          await dir.chmod(create).finally(() => dir.close());
        } catch (err) {
          if (errno(err) !== 'EEXIST') throw err;
        }
      }
      const next = await openChild(cur, name, r);
      await cur.close();
      cur = next;
    }
    return cur;
  } catch (err) {
    await cur.close();
    if (errno(err) === 'ELOOP') throw escapes(r);
    throw err;
  }
}

/** Step 2: the longest existing prefix must resolve inside the volume; the rest is created below it. */
async function ensureExists(rootReal: string, parts: readonly string[], r: SubPathRequest): Promise<void> {
  let i = parts.length;
  let existing: string | undefined;
  for (; i >= 0; i--) {
    try {
      existing = await realpath(join(rootReal, ...parts.slice(0, i)));
      break;
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }
  if (i === parts.length) return;
  if (existing === undefined || !within(rootReal, existing)) throw escapes(r);
  const perm = (await stat(rootReal)).mode & 0o7777;
  const base = relative(rootReal, existing);
  const fh = await walk(rootReal, [...(base ? base.split(sep) : []), ...parts.slice(i)], r, perm);
  await fh.close();
}

async function inodeOf(target: string): Promise<{ dev: number; ino: number } | undefined> {
  try {
    const st = await stat(target);
    return { dev: st.dev, ino: st.ino };
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Verifies `r.subPath` inside `r.volumeRoot` and bind-mounts it on `r.target` (steps 1–6 above).
 * Idempotent: a target that already is the same file is kept. Throws ERR_FAILED_PRECONDITION with
 * a message for the pod's events (it names the subPath, not host paths). Root only (mount).
 */
export async function prepareSubPath(r: SubPathRequest, mounter: Mounter, signal: AbortSignal): Promise<string> {
  // 1.
  const problems = localDescendingPathProblems(r.subPath);
  if (problems.length) throw fail(r, `subPath "${r.subPath}" ${problems.join(', ')}`);
  try {
    return await bindVerified(r, r.subPath.split('/').filter((p) => p !== '' && p !== '.'), mounter, signal);
  } catch (err) {
    // Errno errors name /proc and host paths: the pod's events get the code only.
    if (errno(err) && !isAgentError(err)) throw fail(r, `subPath "${r.subPath}" could not be prepared (${errno(err)})`);
    throw err;
  }
}

async function bindVerified(r: SubPathRequest, parts: readonly string[], mounter: Mounter, signal: AbortSignal): Promise<string> {
  const rootReal = await realpath(r.volumeRoot);
  // 2. + 3.
  await ensureExists(rootReal, parts, r);
  const resolved = await realpath(join(rootReal, ...parts));
  if (!within(rootReal, resolved)) throw escapes(r);
  // 4.
  const rel = relative(rootReal, resolved);
  const fh = await walk(rootReal, rel ? rel.split(sep) : [], r);
  try {
    const st = await fh.stat();
    if (!st.isDirectory() && !st.isFile()) throw fail(r, `subPath "${r.subPath}" is neither a file nor a directory`);
    // 5.
    const current = await inodeOf(r.target);
    if (current && current.dev === st.dev && current.ino === st.ino) return r.target;
    // A stale target (the subPath now resolves elsewhere) is unmounted first; unmountAllUnder
    // refuses to go on while anything is still mounted, so rm cannot reach into a volume.
    await unmountAllUnder(mounter, r.target, signal);
    await rm(r.target, { recursive: true, force: true });
    await mkdir(dirname(r.target), { recursive: true });
    if (st.isDirectory()) await mkdir(r.target, { mode: 0o700 });
    else await writeFile(r.target, '', { mode: 0o600 });
    await mounter.bindMount(`/proc/${process.pid}/fd/${fh.fd}`, r.target, signal);
    // 6.
    const after = await inodeOf(r.target);
    if (!after || after.dev !== st.dev || after.ino !== st.ino) {
      await mounter.unmount(r.target, AbortSignal.timeout(30_000)).catch(() => undefined); // already failing below; a mount left behind goes with the pod dir
      throw fail(r, `subPath "${r.subPath}" changed while it was being mounted`);
    }
    return r.target;
  } finally {
    await fh.close();
  }
}

/** kubelet's `<pod dir>/volume-subpaths/<volume>/<container>/<index>`. */
export function subPathTarget(podDir: string, volume: string, container: string, index: number): string {
  return join(podDir, 'volume-subpaths', volume, container, String(index));
}

/**
 * subPathExpr with `$(VAR)` taken from the container's environment (`$$` is a literal `$`). A
 * reference to a variable that is unset or empty is an error, as in the kubelet.
 */
export function expandSubPathExpr(expr: string, env: readonly EnvVarValue[]): string {
  const vars = new Map(env.map((e) => [e.key, e.value]));
  const missing = new Set<string>();
  const out = expr.replace(/\$\$|\$\(([^)]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    const v = vars.get(name!);
    if (!v) missing.add(name!);
    return v ?? '';
  });
  if (missing.size) throw new AgentError('ERR_FAILED_PRECONDITION', `subPathExpr "${expr}": missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

/**
 * Prepares every subPath/subPathExpr mount of `container` (volumes.ts has created the volumes)
 * and returns the host path per volumeMount index for buildContainerConfig. Called right before
 * CreateContainer, on every start, so a subPath is re-verified each time. Throws
 * ERR_FAILED_PRECONDITION (CreateContainerConfigError) naming the mount.
 */
export async function prepareContainerSubPaths(
  pod: Pod,
  container: Container,
  env: readonly EnvVarValue[],
  rootDir: string,
  mounter: Mounter,
  signal: AbortSignal,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  const mounts = container.volumeMounts ?? [];
  for (let i = 0; i < mounts.length; i++) {
    const vm = mounts[i]!;
    if (!vm.subPath && !vm.subPathExpr) continue;
    const v = volumes.get(vm.name);
    const root = v && volumeHostPath(rootDir, pod.metadata.uid!, v);
    if (!root) continue;
    const subPath = vm.subPathExpr ? expandSubPathExpr(vm.subPathExpr, env) : vm.subPath!;
    const target = subPathTarget(podDir(rootDir, pod.metadata.uid!), vm.name, container.name, i);
    out.set(i, await prepareSubPath({ volumeRoot: root, subPath, target, volume: vm.name, container: container.name }, mounter, signal));
  }
  return out;
}
