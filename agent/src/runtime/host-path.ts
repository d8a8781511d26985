/**
 * hostPath `type` checks, as kubelet's hostPath plugin makes them before the container starts:
 *
 *   ''                  nothing is checked (the path is mounted as it is; the runtime creates a missing one)
 *   DirectoryOrCreate   created (mkdir -p, 0755) when absent, then must be a directory
 *   Directory           must be a directory
 *   FileOrCreate        created as an empty file (0644, its parent must exist) when absent, then must be a file
 *   File                must be a regular file
 *   Socket              must be a unix socket
 *   CharDevice          must be a character device
 *   BlockDevice         must be a block device
 *
 * The messages are kubelet's ("hostPath type check failed: /x is not a directory"). Symbolic links
 * are followed, as kubelet's stat does.
 */
import { chmod, mkdir, open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { AgentError } from '@nodelet/base';
import type { Volume } from '@nodelet/api/agent';

type HostPathType = NonNullable<NonNullable<Volume['hostPath']>['type']>;

const CHECKS: Readonly<Record<Exclude<HostPathType, '' | 'DirectoryOrCreate' | 'FileOrCreate'>, { is: (s: Stats) => boolean; what: string }>> = {
  Directory: { is: (s) => s.isDirectory(), what: 'a directory' },
  File: { is: (s) => s.isFile(), what: 'a file' },
  Socket: { is: (s) => s.isSocket(), what: 'a socket file' },
  CharDevice: { is: (s) => s.isCharacterDevice(), what: 'a character device' },
  BlockDevice: { is: (s) => s.isBlockDevice(), what: 'a block device' },
};

const statOrUndefined = (p: string): Promise<Stats | undefined> => stat(p).catch(() => undefined); // absent or unreadable reads as missing; the type check reports it

/** Checks (and for the *OrCreate types creates) the hostPath of a volume. Throws ERR_FAILED_PRECONDITION with kubelet's message. */
export async function checkHostPath(src: NonNullable<Volume['hostPath']>): Promise<void> {
  const type = src.type ?? '';
  const path = src.path;
  if (type === '') return;
  if (type === 'DirectoryOrCreate' && !(await statOrUndefined(path))) {
    // chmod as well: mkdir's mode is subject to the agent's umask, kubelet's 0755 is not meant to be.
    const first = await mkdir(path, { recursive: true, mode: 0o755 });
    if (first !== undefined) await chmod(path, 0o755);
    return;
  }
  if (type === 'FileOrCreate' && !(await statOrUndefined(path))) {
    try {
      // O_CREAT without O_EXCL or O_TRUNC: a file that appeared meanwhile is kept as it is.
      const fh = await open(path, 'a', 0o644);
      await fh.close();
    } catch (err) {
      throw new AgentError('ERR_FAILED_PRECONDITION', `open ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`, { cause: err });
    }
    return;
  }
  const check = type === 'DirectoryOrCreate' ? CHECKS.Directory : type === 'FileOrCreate' ? CHECKS.File : CHECKS[type];
  if (!check) throw new AgentError('ERR_FAILED_PRECONDITION', `${type} is an invalid volume type`);
  const st = await statOrUndefined(path);
  if (!st || !check.is(st)) throw new AgentError('ERR_FAILED_PRECONDITION', `hostPath type check failed: ${path} is not ${check.what}`);
}
