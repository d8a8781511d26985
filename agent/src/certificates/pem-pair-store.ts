/**
 * A certificate and its key as ONE file, kubelet's layout for its rotated certificates:
 *
 *   <dir>/kubelet-server-2026-01-01-00-00-00.pem     certificate chain, then the private key; 0600
 *   <dir>/kubelet-server-current.pem  ──symlink──▶   the one in use
 *
 * A new pair is written to a new timestamped file (fsynced), then a temp symlink to it is
 * renamed over `-current.pem` and the directory fsynced. The rename is the commit: a crash
 * before it leaves the old pair current, after it the new one, never a key with another
 * certificate. Older files are pruned, keeping the one before the current (to look at after a
 * bad rotation).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { syncDir, writeNewFileSynced } from '@nodelet/api/agent';
import type { Clock } from '@nodelet/base';
import { inspectCertificate, pairProblem, splitPem, type CertificateInfo } from './x509.js';

export interface StoredPair {
  certPem: string;
  keyPem: string;
  /** The timestamped file `-current.pem` points at. */
  path: string;
  info: CertificateInfo;
}

export type LoadedPair = { status: 'ok'; pair: StoredPair } | { status: 'missing' } | { status: 'invalid'; why: string };

const FILE_MODE = 0o600;
const KEY_LABEL = /^(EC |RSA )?PRIVATE KEY$/;

/** `2026-01-01-00-00-00` (UTC), the timestamp kubelet puts in the file name. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace(/[T:]/g, '-');
}

export class PemPairStore {
  readonly #dir: string;
  readonly #name: string;
  readonly #clock: Clock;

  /** `pairName` e.g. `kubelet-server`; files go to `<dir>/<pairName>-*.pem`. */
  constructor(o: { dir: string; pairName: string; clock: Clock }) {
    this.#dir = o.dir;
    this.#name = o.pairName;
    this.#clock = o.clock;
  }

  /** `<dir>/<pairName>-current.pem`. */
  get currentPath(): string {
    return join(this.#dir, `${this.#name}-current.pem`);
  }

  /** The current pair: `missing` when there is none, `invalid` (with why) when it cannot be served. */
  async load(): Promise<LoadedPair> {
    let text: string;
    let target: string;
    try {
      target = await readlink(this.currentPath).then((t) => join(this.#dir, basename(t)), () => this.currentPath);
      text = await readFile(this.currentPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
      throw err;
    }
    const certs = splitPem(text, 'CERTIFICATE');
    const keys = splitPem(text, KEY_LABEL);
    if (!certs.length || keys.length !== 1) return { status: 'invalid', why: `"${target}" does not hold a certificate and one private key` };
    const certPem = certs.join('');
    const keyPem = keys[0]!;
    const why = pairProblem(certPem, keyPem);
    if (why) return { status: 'invalid', why };
    return { status: 'ok', pair: { certPem, keyPem, path: target, info: inspectCertificate(certPem) } };
  }

  /** Writes the pair to a new file and makes it current (see the file comment). Returns the new file. */
  async update(certPem: string, keyPem: string): Promise<string> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const path = await this.#writeNew(`${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
    const tmp = join(this.#dir, `.${this.#name}-current.pem.tmp-${randomBytes(6).toString('hex')}`);
    try {
      await symlink(basename(path), tmp);
      await rename(tmp, this.currentPath);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    await syncDir(this.#dir);
    await this.#prune(basename(path));
    return path;
  }

  async #writeNew(content: string): Promise<string> {
    const base = `${this.#name}-${stamp(this.#clock.now())}`;
    for (let i = 0; ; i++) {
      const path = join(this.#dir, `${base}${i ? `-${i}` : ''}.pem`);
      try {
        await writeNewFileSynced(path, content, FILE_MODE);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && i < 100) continue;
        throw err;
      }
      return path;
    }
  }

  /** Removes this pair's files but the current one and the newest before it, and temp links a crash left. */
  async #prune(current: string): Promise<void> {
    const names = await readdir(this.#dir);
    const mine = names
      .filter((n) => n.startsWith(`${this.#name}-`) && n.endsWith('.pem') && n !== `${this.#name}-current.pem` && n !== current)
      .sort();
    const stale = [...mine.slice(0, -1), ...names.filter((n) => n.startsWith(`.${this.#name}-current.pem.tmp-`))];
    await Promise.all(stale.map((n) => rm(join(this.#dir, n), { force: true })));
  }
}
