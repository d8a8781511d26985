/**
 * A certificate and its key as two files, `<base>.crt` (0644) and `<base>.key` (0600), written
 * so that a crash never leaves a pair that looks usable but is not:
 *
 *   write .<base>.key.tmp-<id>  (0600, fsync)     a crash here: old pair intact, temp files
 *   write .<base>.crt.tmp-<id>  (0644, fsync)       are removed by the next write
 *   rename → <base>.key                            a crash here: new key + old cert; loadPair
 *   rename → <base>.crt                              reports "mismatch" and the owner re-issues
 *   fsync the directory                            (the renames survive power loss)
 *
 * Two renames are not one atomic step, so instead of pretending they are, every load checks
 * that the key is the certificate's (pair.ts) before anything uses the pair.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir, writeNewFileSynced } from '@nodelet/api';
import type { KeyPairPem } from './certs.js';
import { pairMismatch } from './pair.js';

export const KEY_MODE = 0o600;
export const CERT_MODE = 0o644;

export type LoadedPair = { status: 'ok'; pair: KeyPairPem } | { status: 'missing' } | { status: 'mismatch'; why: string };

/** Reads `<dir>/<base>.{crt,key}`; either file missing is `missing`, a key not the cert's is `mismatch`. */
export async function loadPair(dir: string, base: string): Promise<LoadedPair> {
  let pair: KeyPairPem;
  try {
    pair = { certPem: await readFile(join(dir, `${base}.crt`), 'utf8'), keyPem: await readFile(join(dir, `${base}.key`), 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    throw err;
  }
  const why = pairMismatch(pair.certPem, pair.keyPem);
  return why ? { status: 'mismatch', why } : { status: 'ok', pair };
}

/**
 * Replaces `<dir>/<base>.{crt,key}` with `pair` (see the file comment for the order and what a
 * crash leaves). Modes are set explicitly, whatever the process umask. Not safe against a
 * concurrent writer of the same base; the control plane has one (its PKI owner).
 */
export async function writePairAtomic(dir: string, base: string, pair: KeyPairPem): Promise<void> {
  await removeTemps(dir, base);
  const id = randomBytes(6).toString('hex');
  const keyTmp = join(dir, `.${base}.key.tmp-${id}`);
  const certTmp = join(dir, `.${base}.crt.tmp-${id}`);
  try {
    await writeNewFileSynced(keyTmp, pair.keyPem, KEY_MODE);
    await writeNewFileSynced(certTmp, pair.certPem, CERT_MODE);
    await rename(keyTmp, join(dir, `${base}.key`));
    await rename(certTmp, join(dir, `${base}.crt`));
  } catch (err) {
    await Promise.all([rm(keyTmp, { force: true }), rm(certTmp, { force: true })]);
    throw err;
  }
  await syncDir(dir);
}


/** Temp files a crash left behind for `base`. */
async function removeTemps(dir: string, base: string): Promise<void> {
  const prefixes = [`.${base}.key.tmp-`, `.${base}.crt.tmp-`];
  for (const name of await readdir(dir)) {
    if (prefixes.some((p) => name.startsWith(p))) await rm(join(dir, name), { force: true });
  }
}
