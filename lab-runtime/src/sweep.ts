/**
 * Leaves nothing behind after a private containerd stops. containerd's shims and containers
 * outlive containerd by design, so after stopping it we, in this order:
 *   1. `runc delete --force` every container whose bundle is in our state dir,
 *   2. SIGKILL the shims whose `-address` is our socket, and remove their sockets
 *      (/run/containerd/s/<sha256(address/ns/id)>, containerd's `shim.SocketAddress`),
 *   3. lazily unmount everything mounted under our directory (rootfs, shm, netns, overlay),
 *      deepest first, then remove the directory.
 * Each step continues past failures and the first error is reported at the end.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { findProcesses, run, terminate } from './procs.js';

export interface SweepTarget {
  /** Directory holding root, state, socket: everything under it is unmounted and removed. */
  dir: string;
  state: string;
  socket: string;
  /** Remove `dir` itself at the end (tests); `runtime down` keeps config and logs. */
  removeDir: boolean;
}

export async function sweepRuntime(t: SweepTarget): Promise<Error[]> {
  const errors: Error[] = [];
  const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      errors.push(new Error(`${what}: ${(err as Error).message}`, { cause: err }));
    }
  };

  const ids = await taskIds(t.state);
  await attempt('removing leftover containers', () => removeContainers(t.state, t.dir));
  await attempt('stopping leftover shims', () => killShims(t.socket));
  await attempt('unmounting', () => unmountUnder(t.dir));
  await attempt('removing CNI result cache', () => removeCniResults(ids));
  if (t.removeDir) await attempt(`removing "${t.dir}"`, () => rm(t.dir, { recursive: true, force: true, maxRetries: 3 }));
  return errors;
}

/**
 * Every task bundle under <state>/io.containerd.runtime.v2.task/<ns>/<id> is one of ours. CRI
 * containers use our private runc root (or crun's, for the `crun` handler); others (e.g.
 * `ctr run`) use runc's default /run/containerd/runc/<ns>, shared with other containerds, so
 * there we delete an id only when the runtime's state says its bundle lies inside our directory.
 */
async function removeContainers(state: string, dir: string): Promise<void> {
  const tasks = join(state, 'io.containerd.runtime.v2.task');
  for (const ns of await readdirOrEmpty(tasks)) {
    for (const id of await readdirOrEmpty(join(tasks, ns))) {
      const roots: Array<[binary: string, root: string]> = [['runc', join(state, 'runc', ns)], ['runc', join('/run/containerd/runc', ns)]];
      if (existsSync(join(state, 'crun', ns))) roots.push(['crun', join(state, 'crun', ns)]);
      for (const [binary, root] of roots) {
        const st = await run(binary, ['--root', root, 'state', id]);
        if (st.code !== 0) continue;
        let bundle = '';
        try {
          bundle = (JSON.parse(st.stdout) as { bundle?: string }).bundle ?? '';
        } catch {
          // Unparseable state: no bundle, so the container is not shown to be ours and is left alone.
        }
        if (!bundle.startsWith(dir + '/')) continue;
        const r = await run(binary, ['--root', root, 'delete', '--force', id]);
        if (r.code !== 0) throw new Error(`${binary} delete ${id}: ${r.stderr.trim()}`);
      }
    }
  }
}

/** IDs of every task (sandboxes and containers) containerd created under `state`. */
async function taskIds(state: string): Promise<string[]> {
  const tasks = join(state, 'io.containerd.runtime.v2.task');
  const ids: string[] = [];
  for (const ns of await readdirOrEmpty(tasks)) ids.push(...(await readdirOrEmpty(join(tasks, ns))));
  return ids;
}

/**
 * libcni caches each ADD result in /var/lib/cni/results/<network>-<containerID>-<ifname>; a sandbox
 * never stopped (no DEL) leaves them, including containerd's own "cni-loopback" network.
 */
async function removeCniResults(ids: string[]): Promise<void> {
  const dir = '/var/lib/cni/results';
  const names = await readdirOrEmpty(dir);
  for (const id of ids.filter((i) => /^[a-f0-9]{64}$/.test(i))) {
    for (const n of names) if (n.includes(`-${id}-`)) await rm(join(dir, n), { force: true });
  }
}

async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch {
    return [];
  }
}

async function killShims(socket: string): Promise<void> {
  const shims = await findProcesses((argv) => /containerd-shim/.test(argv[0] ?? '') && argValue(argv, '-address') === socket);
  for (const s of shims) {
    await terminate(s.pid, 0);
    const ns = argValue(s.argv, '-namespace');
    const id = argValue(s.argv, '-id');
    if (ns && id) {
      const hash = createHash('sha256').update(posix.join(socket, ns, id)).digest('hex');
      await rm(join('/run/containerd/s', hash), { force: true });
    }
  }
}

function argValue(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Mount points at or below `dir`, from /proc/self/mountinfo. */
export async function mountsUnder(dir: string): Promise<string[]> {
  return parseMountPoints(await readFile('/proc/self/mountinfo', 'utf8'), dir);
}

/** Mount points (field 5 of mountinfo, octal escapes such as `\040` decoded) at or below `dir`. */
export function parseMountPoints(mountinfo: string, dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : dir + '/';
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const mp = line.split(' ')[4];
    if (!mp) continue;
    const path = mp.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (path === dir || path.startsWith(prefix)) out.push(path);
  }
  return out;
}

/** Unmount (lazily) every mount at or below `dir`, deepest first; throws naming what stayed mounted. */
export async function unmountUnder(dir: string): Promise<void> {
  // A path can be mounted more than once; repeat until nothing is left (bounded).
  for (let round = 0; round < 5; round++) {
    const mounts = (await mountsUnder(dir)).sort((a, b) => b.length - a.length);
    if (mounts.length === 0) return;
    for (const m of mounts) await run('umount', ['-l', m]);
  }
  const left = await mountsUnder(dir);
  if (left.length) throw new Error(`still mounted: ${left.join(', ')}`);
}
