/**
 * One writer at a time per image store. `buildImage`, `importImages` and `removeImages` run under
 * the lock, so garbage collection never deletes a blob that a concurrent build or import has
 * written but not tagged yet, and `index.json` updates are not lost. Readers (the registry,
 * `ls`, `export`) take no lock: every file they read is replaced atomically.
 *
 * The lock is the file `<store>/.nodelet-lock` created exclusively and holding the owner's PID.
 * A lock whose process is gone (a crashed writer) is taken over.
 */
import { open, readFile, rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, delay, processExists } from '@nodelet/base';

export const STORE_LOCK_FILE = '.nodelet-lock';

export interface StoreLockOptions {
  signal?: AbortSignal;
  /** How long to wait for another writer; default 10 minutes. */
  timeoutMs?: number;
}

/** Runs `fn` holding the store's write lock; waits (polling) while another writer holds it. */
export async function withStoreLock<T>(root: string, fn: () => Promise<T>, opts: StoreLockOptions = {}): Promise<T> {
  await mkdir(root, { recursive: true });
  const file = join(root, STORE_LOCK_FILE);
  const until = Date.now() + (opts.timeoutMs ?? 600_000);
  for (;;) {
    opts.signal?.throwIfAborted();
    const holder = await tryLock(file);
    if (holder === 0) break;
    if (Date.now() > until) {
      throw new AgentError('ERR_UNAVAILABLE', `image store "${root}" is locked by process ${holder} (${file}); wait for it to finish, or remove the file if that process is gone`);
    }
    await delay(50, opts.signal);
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

/** 0 when the lock was taken; otherwise the PID holding it. */
async function tryLock(file: string): Promise<number> {
  try {
    const fh = await open(file, 'wx', 0o644);
    try {
      await fh.writeFile(`${process.pid}\n`);
    } finally {
      await fh.close();
    }
    return 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  // An empty file is a writer between create and write: wait for it.
  if (Number.isInteger(pid) && pid > 0 && !processExists(pid)) {
    // HACK(stale lock): two processes taking over the same stale lock at the same instant could
    // both remove it; the window is one crashed writer followed by two racing ones.
    await rm(file, { force: true });
    return tryLock(file);
  }
  return pid || -1;
}
