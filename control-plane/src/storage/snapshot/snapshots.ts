/**
 * Snapshots of either store, as files in one directory (docs/backup.md):
 *
 *   <dir>/<server>-<sqlite|etcd>-<UTC time>.db        the snapshot, mode 0600 (it holds every Secret)
 *   <dir>/<server>-<sqlite|etcd>-<UTC time>.db.json   its sidecar: kind, server, time, sha256, store
 *                                                     revision, object count, size
 *
 * Both files are written to a temp name, fsynced and renamed, the sidecar last: a snapshot without
 * its sidecar is an interrupted save and never counts as good. This module names, lists, verifies
 * and prunes them; sqlite-snapshot.ts and etcd-snapshot.ts take them.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '@nodelet/api';
import { AgentError, readdirIfExists } from '@nodelet/base';

export type SnapshotKind = 'sqlite' | 'etcd';

/** The sidecar of a snapshot (`<file>.json`). */
export interface SnapshotInfo {
  /** The snapshot's file name (in the same directory as the sidecar). */
  file: string;
  kind: SnapshotKind;
  /** The server (node or host name) that took it. */
  server: string;
  /** When it was taken, RFC 3339 UTC. */
  createdAt: string;
  sha256: string;
  /** The store revision it holds: every write acknowledged at or below it is in the file. */
  revision: number;
  /** Live keys (objects) in the store at that revision. */
  objects: number;
  bytes: number;
}

const SIDECAR = '.json';
const NAME = /^(.+)-(sqlite|etcd)-(\d{8}T\d{6}(?:\d{3})?Z)\.db$/;

/** `<server>-<kind>-<YYYYMMDDTHHMMSSmmmZ>.db`: sorts by time within one server and kind. */
export function snapshotFileName(server: string, kind: SnapshotKind, at: Date): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(server)) throw new AgentError('ERR_INVALID_ARGUMENT', `server name ${JSON.stringify(server)} cannot be part of a file name`);
  const t = at.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${server}-${kind}-${t}.db`;
}

/** sha256 of a file, streamed. */
export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Records `info` beside its snapshot; the snapshot counts as good from this moment. */
export async function writeSidecar(dir: string, info: SnapshotInfo): Promise<void> {
  await writeFileAtomic(join(dir, info.file + SIDECAR), `${JSON.stringify(info, null, 2)}\n`, 0o600);
}

/** A snapshot on disk: its sidecar, or why it is not a good one. */
export type ListedSnapshot = { file: string; path: string; info?: SnapshotInfo; problem?: string };

/**
 * Every snapshot in `dir` (files named as {@link snapshotFileName} makes), newest first. One with a
 * missing or unreadable sidecar is listed with its problem (an interrupted save), never as good.
 */
export async function listSnapshots(dir: string): Promise<ListedSnapshot[]> {
  const names = await readdirIfExists(dir);
  const out: ListedSnapshot[] = [];
  for (const file of names.filter((n) => NAME.test(n))) {
    const path = join(dir, file);
    try {
      const info = JSON.parse(await readFile(path + SIDECAR, 'utf8')) as SnapshotInfo;
      if (info.file !== file || typeof info.sha256 !== 'string' || typeof info.revision !== 'number') throw new Error('the sidecar does not describe this file');
      out.push({ file, path, info });
    } catch (err) {
      out.push({ file, path, problem: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no sidecar (an interrupted save)' : `unreadable sidecar: ${(err as Error).message}` });
    }
  }
  const time = (f: string): string => NAME.exec(f)![3]!;
  return out.sort((a, b) => (time(a.file) < time(b.file) ? 1 : time(a.file) > time(b.file) ? -1 : a.file < b.file ? 1 : -1));
}

/** Checks a snapshot against its sidecar's sha256; returns the sidecar. */
export async function verifySnapshot(path: string): Promise<SnapshotInfo> {
  let info: SnapshotInfo;
  try {
    info = JSON.parse(await readFile(path + SIDECAR, 'utf8')) as SnapshotInfo;
  } catch (err) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `${path}: no readable sidecar ${basename(path)}${SIDECAR} (${(err as Error).message}); not a complete snapshot`);
  }
  const sum = await sha256File(path);
  if (sum !== info.sha256) throw new AgentError('ERR_FAILED_PRECONDITION', `${path}: sha256 ${sum} does not match the sidecar's ${info.sha256}; the file is damaged`);
  return info;
}

/**
 * Keeps the newest `retention` good snapshots of `server` and `kind` and removes the older ones
 * (with their sidecars); interrupted saves older than the newest good one go too. Never removes
 * the last good one: retention below 1 is refused. Returns the files removed.
 */
export async function pruneSnapshots(dir: string, o: { retention: number; server?: string; kind?: SnapshotKind }): Promise<string[]> {
  if (!Number.isInteger(o.retention) || o.retention < 1) throw new AgentError('ERR_INVALID_ARGUMENT', `retention must be a whole number of at least 1 (the last good snapshot is never removed), got ${o.retention}`);
  const mine = (await listSnapshots(dir)).filter((s) => {
    const m = NAME.exec(s.file)!;
    return (o.server === undefined || m[1] === o.server) && (o.kind === undefined || m[2] === o.kind);
  });
  const good = mine.filter((s) => s.info);
  if (good.length === 0) return [];
  const keep = new Set(good.slice(0, o.retention).map((s) => s.file));
  const newestGood = good[0]!.file;
  const removed: string[] = [];
  let pastNewestGood = false;
  for (const s of mine) {
    if (s.file === newestGood) pastNewestGood = true;
    if (keep.has(s.file)) continue;
    if (!s.info && !pastNewestGood) continue; // a save that may still be running
    await rm(s.path, { force: true });
    await rm(s.path + SIDECAR, { force: true });
    removed.push(s.file);
  }
  return removed;
}
