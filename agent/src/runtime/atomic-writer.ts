/**
 * Writes the files of a secret or configMap volume so that a container never sees a half-written
 * set (the kubelet's AtomicWriter, pkg/volume/util/atomic_writer.go, described in docs/agent.md):
 *
 *   <dir>/..2025_01_02_15_04_05.123456   the files of one version, written whole, then never changed
 *   <dir>/..data -> ..2025_01_02_…        swapped with rename(2): readers see the old or the new set
 *   <dir>/<key>  -> ..data/<key>          what the container opens (first path element only)
 *
 *   1. validate every path (relative, no '..' element, not '..'-prefixed: `..data` is ours)
 *   2. same content, modes and group as the current version? only repair the visible links, done
 *   3. write the new version: files created O_EXCL|O_NOFOLLOW, then fchmod/fchown, so the agent's
 *      umask never decides a mode; directories 0755
 *   4. `..data_tmp` -> new version, rename over `..data`
 *   5. create missing `<key>` links; remove names that are no longer in the payload
 *   6. remove older versions
 *
 * fsGroup works as the kubelet's SetVolumeOwnership for a read-only volume: group ownership on
 * everything, `g+r` on files, `g+rx` and setgid on directories.
 *
 * Concurrency: one writer per directory at a time (the pod worker's sync). Not cancellable
 * mid-write; a crash leaves at most an unreferenced version directory, removed by the next write.
 */
import { constants, type Stats } from 'node:fs';
import { chmod, chown, lchown, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { AgentError } from '@nodelet/base';
import { localNonReservedPathProblems } from '@nodelet/api/agent';

export interface FileProjection {
  data: Uint8Array;
  /** Permission bits, 0–0777. */
  mode: number;
}

export interface AtomicWriteOptions {
  /** Group that owns every file (pod `securityContext.fsGroup`). */
  fsGroup?: number;
  /** Names the version directory; defaults to the wall clock. */
  now?: () => Date;
}

const DATA = '..data';
const DATA_TMP = '..data_tmp';
const DIR_MODE = 0o755;
const MAX_NAME = 255;
const MAX_PATH = 4096;

function invalid(p: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid path "${p}": ${why}`);
}

/** Checks and normalises payload paths; refuses a path that is both a file and a directory. */
export function validatePayload(payload: ReadonlyMap<string, FileProjection>): Map<string, FileProjection> {
  const out = new Map<string, FileProjection>();
  for (const [p, f] of payload) {
    if (p === '') throw invalid(p, 'must not be empty');
    const problems = localNonReservedPathProblems(p);
    if (problems.length) throw invalid(p, problems.join(', '));
    if (p.length > MAX_PATH) throw invalid(p, `must be at most ${MAX_PATH} characters`);
    if (p.split('/').some((e) => e.length > MAX_NAME)) throw invalid(p, `file names must be at most ${MAX_NAME} characters`);
    const norm = posix.normalize(p).replace(/\/$/, '');
    if (norm === '.' || norm.startsWith('..')) throw invalid(p, 'must name a file below the volume');
    if (out.has(norm)) throw invalid(p, 'duplicate path');
    out.set(norm, { data: f.data, mode: f.mode & 0o777 });
  }
  for (const p of out.keys()) {
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
      if (out.has(p.slice(0, i))) throw invalid(p, `"${p.slice(0, i)}" is also a file`);
    }
  }
  return out;
}

const fileMode = (mode: number, o: AtomicWriteOptions): number => (o.fsGroup === undefined ? mode : mode | 0o440);
const dirMode = (o: AtomicWriteOptions): number => (o.fsGroup === undefined ? DIR_MODE : DIR_MODE | 0o2550);
const topLevel = (p: string): string => p.split('/')[0]!;

async function readlinkOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await readlink(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw err;
  }
}

/** Regular files below `dir` as relative paths, with their stats (symlinks make it "different"). */
async function listFiles(dir: string, rel = ''): Promise<Map<string, Stats> | undefined> {
  const out = new Map<string, Stats>();
  for (const name of await readdir(join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const st = await lstat(join(dir, r));
    if (st.isDirectory()) {
      const sub = await listFiles(dir, r);
      if (!sub) return undefined;
      for (const [k, v] of sub) out.set(k, v);
    } else if (st.isFile()) out.set(r, st);
    else return undefined;
  }
  return out;
}

async function sameAsCurrent(version: string, payload: ReadonlyMap<string, FileProjection>, o: AtomicWriteOptions): Promise<boolean> {
  const files = await listFiles(version).catch(() => undefined); // no readable current version: not the same, so it is rewritten
  if (!files || files.size !== payload.size) return false;
  for (const [p, f] of payload) {
    const st = files.get(p);
    if (!st || (st.mode & 0o7777) !== fileMode(f.mode, o) || (o.fsGroup !== undefined && st.gid !== o.fsGroup)) return false;
    if (st.size !== f.data.byteLength || !Buffer.from(f.data).equals(await readFile(join(version, p)))) return false;
  }
  return true;
}

async function mkdirOwned(path: string, o: AtomicWriteOptions): Promise<void> {
  await mkdir(path);
  await chmod(path, dirMode(o));
  if (o.fsGroup !== undefined) await chown(path, -1, o.fsGroup);
}

async function writeVersion(dir: string, payload: ReadonlyMap<string, FileProjection>, o: AtomicWriteOptions): Promise<string> {
  const d = (o.now ?? (() => new Date()))();
  const pad = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${d.getUTCFullYear()}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(d.getUTCMinutes())}_${pad(d.getUTCSeconds())}`;
  const version = await mkdtemp(join(dir, `..${stamp}.`));
  await chmod(version, dirMode(o));
  if (o.fsGroup !== undefined) await chown(version, -1, o.fsGroup);
  const made = new Set<string>();
  for (const [p, f] of payload) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const sub = parts.slice(0, i).join('/');
      if (made.has(sub)) continue;
      await mkdirOwned(join(version, sub), o);
      made.add(sub);
    }
    const fh = await open(join(version, p), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(f.data);
      if (o.fsGroup !== undefined) await fh.chown(-1, o.fsGroup);
      await fh.chmod(fileMode(f.mode, o));
    } finally {
      await fh.close();
    }
  }
  return version;
}

/** Makes `<dir>/<name>` the link `..data/<name>`, replacing whatever else is there (files of older agents). */
async function ensureVisible(dir: string, name: string, o: AtomicWriteOptions): Promise<void> {
  const path = join(dir, name);
  const want = `${DATA}/${name}`;
  if ((await readlinkOrUndefined(path)) === want) return;
  await rm(path, { recursive: true, force: true });
  await symlink(want, path);
  if (o.fsGroup !== undefined) await lchown(path, -1, o.fsGroup);
}

/**
 * Makes `dir` (an existing directory the agent owns) hold exactly `payload`. Idempotent: returns
 * false, and writes nothing, when the current version already matches.
 */
export async function writeAtomically(dir: string, payload: ReadonlyMap<string, FileProjection>, o: AtomicWriteOptions = {}): Promise<boolean> {
  // 1.
  const files = validatePayload(payload);
  const visible = new Set([...files.keys()].map(topLevel));
  const current = await readlinkOrUndefined(join(dir, DATA));
  // 2.
  let changed = false;
  let keep = current;
  if (!current || current.includes('/') || !(await sameAsCurrent(join(dir, current), files, o))) {
    // 3.
    const version = await writeVersion(dir, files, o);
    keep = posix.basename(version);
    // 4.
    const tmp = join(dir, DATA_TMP);
    await rm(tmp, { force: true });
    await symlink(keep, tmp);
    if (o.fsGroup !== undefined) await lchown(tmp, -1, o.fsGroup);
    // rename(2) cannot replace a directory with a link; `..data` is only ever a link we made.
    if (current === undefined) await rm(join(dir, DATA), { recursive: true, force: true });
    await rename(tmp, join(dir, DATA));
    changed = true;
  }
  // 5.
  for (const name of visible) await ensureVisible(dir, name, o);
  for (const name of await readdir(dir)) {
    if (name.startsWith('..') || visible.has(name)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
  }
  // 6.
  for (const name of await readdir(dir)) {
    if (name.startsWith('..') && name !== DATA && name !== keep) await rm(join(dir, name), { recursive: true, force: true });
  }
  if (o.fsGroup !== undefined) {
    await chown(dir, -1, o.fsGroup);
    await chmod(dir, dirMode(o));
  }
  return changed;
}
