/**
 * Whole-file replacement that a crash cannot tear: the content goes to a temp file in the same
 * directory (created exclusively, mode set explicitly whatever the umask, fsynced), which is then
 * renamed over the target, and the directory is fsynced so the rename survives power loss.
 * A reader sees the old file or the new one, never a mix; a failed write leaves the old file.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Replaces `path` with `content` atomically (see the file comment). Not safe against a concurrent writer of the same path. */
export async function writeFileAtomic(path: string, content: string | Buffer, mode: number): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await writeNewFileSynced(tmp, content, mode);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dirname(path));
}

/**
 * Creates `path`, which must not exist (EEXIST otherwise), with `mode` whatever the umask, writes
 * `content` and fsyncs it; a failed write removes what it created. The building block of the
 * atomic replacements here and of key and certificate stores that keep several generations.
 */
export async function writeNewFileSynced(path: string, content: string | Buffer, mode: number): Promise<void> {
  const fh = await open(path, 'wx', mode);
  try {
    await fh.chmod(mode);
    await fh.writeFile(content);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(path, { force: true });
    throw err;
  }
  await fh.close();
}

/** fsyncs a directory, so renames and new entries in it are durable. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
