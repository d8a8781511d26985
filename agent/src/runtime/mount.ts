/**
 * The mounts the agent makes on the node itself: a tmpfs under every secret (and `medium: Memory`
 * emptyDir) volume, and a bind mount for every verified subPath (subpath.ts).
 *
 * HACK(no mount(2) in Node): Node has no binding for mount(2)/umount2(2), and a native addon
 * would be the project's only one, so this module spawns util-linux mount(8) and umount(8). It is
 * the one place in runtime/ that starts processes. Every path is passed with `--no-canonicalize`:
 * mount(8) must hand the kernel exactly the path we verified (for a subPath, the
 * `/proc/<pid>/fd/<n>` link of a descriptor opened without following symlinks) instead of
 * resolving it again through symlinks a container may have planted.
 *
 * Reading mounts needs no process: /proc/self/mountinfo and statfs(2).
 */
import { execFile } from 'node:child_process';
import { readFile, stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AgentError } from '@nodelet/base';

/** The mount operations volumes and subPaths need. Tests pass a fake. */
export interface Mounter {
  /** Mounts a fresh tmpfs on `target` (an existing directory) with `options` (`-o`). */
  mountTmpfs(target: string, options: readonly string[], signal: AbortSignal): Promise<void>;
  /** Bind-mounts `source` (a path or a `/proc/<pid>/fd/<n>` link) on `target` (an existing file or directory). */
  bindMount(source: string, target: string, signal: AbortSignal): Promise<void>;
  /** Lazily unmounts `target` (detached at once, freed when the last user goes). */
  unmount(target: string, signal: AbortSignal): Promise<void>;
  /** Mount points at or below `dir`, deepest first. */
  mountPointsUnder(dir: string): Promise<string[]>;
  /** Whether `dir` is the root of a tmpfs mount. */
  isTmpfsMountPoint(dir: string): Promise<boolean>;
}

const MOUNT_TIMEOUT_MS = 30_000;
/** statfs(2) f_type of tmpfs (linux/magic.h TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;

function run(cmd: string, args: readonly string[], signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { signal, timeout: MOUNT_TIMEOUT_MS, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' } }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if (signal.aborted) return reject(signal.reason ?? err);
      const why = String(stderr).trim() || err.message;
      reject(new AgentError('ERR_INTERNAL', `${cmd} ${args.join(' ')}: ${why}`, { cause: err }));
    });
  });
}

/** Mount points (field 5 of mountinfo, octal escapes such as `\040` decoded) at or below `dir`, deepest first. */
export function parseMountPoints(mountinfo: string, dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const out = new Set<string>();
  for (const line of mountinfo.split('\n')) {
    const raw = line.split(' ')[4];
    if (!raw) continue;
    const mp = raw.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (mp === dir || mp.startsWith(prefix)) out.add(mp);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** The node's mount(8)/umount(8). */
export const hostMounter: Mounter = {
  mountTmpfs: (target, options, signal) => run('mount', ['--no-canonicalize', '-t', 'tmpfs', '-o', options.join(','), 'tmpfs', target], signal),
  bindMount: (source, target, signal) => run('mount', ['--no-canonicalize', '--bind', source, target], signal),
  unmount: (target, signal) => run('umount', ['--no-canonicalize', '--lazy', target], signal),
  async mountPointsUnder(dir) {
    return parseMountPoints(await readFile('/proc/self/mountinfo', 'utf8'), dir);
  },
  async isTmpfsMountPoint(dir) {
    try {
      const [self, parent, fs] = await Promise.all([stat(dir), stat(dirname(dir)), statfs(dir)]);
      return self.dev !== parent.dev && fs.type === TMPFS_MAGIC;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  },
};

/**
 * Unmounts everything at or below `dir` (deepest first, a few rounds for stacked mounts) and
 * checks that nothing is left. Throws ERR_FAILED_PRECONDITION naming what is still mounted:
 * callers must not remove `dir` then, or `rm -r` would reach through a bind mount.
 */
export async function unmountAllUnder(mounter: Mounter, dir: string, signal: AbortSignal): Promise<number> {
  let count = 0;
  for (let round = 0; round < 4; round++) {
    const mounts = await mounter.mountPointsUnder(dir);
    if (mounts.length === 0) return count;
    for (const m of mounts) {
      await mounter.unmount(m, signal).catch(async (err: unknown) => {
        // Gone in the meantime is fine; anything else is reported by the final check.
        if (!(await mounter.mountPointsUnder(m)).includes(m)) return;
        if (round === 3) throw err;
      });
      count++;
    }
  }
  const left = await mounter.mountPointsUnder(dir);
  if (left.length) throw new AgentError('ERR_FAILED_PRECONDITION', `still mounted under "${dir}": ${left.join(', ')}`);
  return count;
}
