/**
 * The audit log file with kube-apiserver's rotation (its log backend writes through lumberjack):
 *
 *   write(line) ─▶ size + line > maxSize? ─yes─▶ rename audit.log → audit-<UTC time>.log,
 *                                                 open a new audit.log, prune backups
 *              └▶ append the line
 *
 * - `maxSizeMB` 0 means lumberjack's default, 100 MB. A single line larger than the limit is
 *   refused (lumberjack does the same) rather than written into an over-size file.
 * - Backups are `<name>-2006-01-02T15-04-05.000<ext>` (UTC). Pruning keeps the newest
 *   `maxBackups` (0: all) and drops those whose name-time is older than `maxAgeDays` (0: never).
 * - Files are created 0600 in a 0700 directory: the log says who did what to which secret.
 *
 * Writes are synchronous, like upstream's default `blocking` mode: an event is on disk (in the
 * page cache) before the response it describes is finished, and a crash loses none. The
 * container log manager in the agent rotates files another process writes (CRI reopen), so it is
 * not this. Single owner; `close()` is idempotent.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

export interface RotationOptions {
  /** Rotate before a write would take the file past this many megabytes (0: 100). */
  maxSizeMB: number;
  /** Delete backups whose timestamp is older than this many days (0: keep). */
  maxAgeDays: number;
  /** Keep at most this many backups (0: keep all). */
  maxBackups: number;
  /** Epoch ms (tests). */
  now?: () => number;
}

const MEGABYTE = 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A line-appending writer for one file, rotating by size. */
export class RotatingFile {
  readonly #path: string;
  readonly #o: Required<RotationOptions>;
  readonly #maxBytes: number;
  #fd: number | undefined;
  #size = 0;

  /** Opens (creating) `path`; throws when it cannot, so a bad `--audit-log-path` stops the start. */
  constructor(path: string, o: RotationOptions) {
    this.#path = path;
    this.#o = { now: Date.now, ...o };
    this.#maxBytes = (o.maxSizeMB > 0 ? o.maxSizeMB : DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#open();
  }

  /** Appends `text` (whole lines), rotating first when it would not fit. Throws on I/O errors. */
  write(text: string): void {
    const buf = Buffer.from(text);
    if (buf.length > this.#maxBytes) throw new Error(`write length ${buf.length} exceeds maximum file size ${this.#maxBytes}`);
    if (this.#fd === undefined) this.#open();
    if (this.#size + buf.length > this.#maxBytes) this.rotate();
    let off = 0;
    while (off < buf.length) off += writeSync(this.#fd!, buf, off);
    this.#size += buf.length;
  }

  /** Moves the current file to a timestamped backup, starts a new one, and prunes backups. */
  rotate(): void {
    this.#closeFd();
    renameSync(this.#path, backupName(this.#path, this.#o.now()));
    this.#open();
    this.#prune();
  }

  close(): void {
    this.#closeFd();
  }

  #open(): void {
    this.#fd = openSync(this.#path, 'a', 0o600);
    this.#size = fstatSync(this.#fd).size;
  }

  #closeFd(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  #prune(): void {
    const { maxBackups, maxAgeDays } = this.#o;
    if (maxBackups === 0 && maxAgeDays === 0) return;
    const dir = dirname(this.#path);
    const backups = listBackups(this.#path, readdirSync(dir)).sort((a, b) => b.time - a.time);
    const cutoff = this.#o.now() - maxAgeDays * DAY_MS;
    backups.forEach((b, i) => {
      if ((maxBackups > 0 && i >= maxBackups) || (maxAgeDays > 0 && b.time < cutoff)) rmSync(join(dir, b.name), { force: true });
    });
  }
}

/** `<dir>/<stem>-<UTC 2006-01-02T15-04-05.000><ext>` for `<dir>/<stem><ext>`. */
export function backupName(path: string, nowMs: number): string {
  const ext = extname(path);
  const stem = basename(path, ext);
  const stamp = new Date(nowMs).toISOString().slice(0, 23).replace(/:/g, '-');
  return join(dirname(path), `${stem}-${stamp}${ext}`);
}

/** The backups of `path` among `names` (base names in its directory), with their name-times. */
export function listBackups(path: string, names: readonly string[]): Array<{ name: string; time: number }> {
  const ext = extname(path);
  const stem = basename(path, ext);
  const out: Array<{ name: string; time: number }> = [];
  for (const name of names) {
    if (!name.startsWith(`${stem}-`) || !name.endsWith(ext)) continue;
    const stamp = name.slice(stem.length + 1, name.length - ext.length);
    const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
    if (!m) continue;
    const time = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
    if (Number.isFinite(time)) out.push({ name, time });
  }
  return out;
}
