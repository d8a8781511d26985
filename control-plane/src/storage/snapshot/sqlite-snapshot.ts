/**
 * Snapshots of the SQLite store: an online, consistent copy through SQLite's backup API (never a
 * file copy of a live database, whose WAL may hold committed writes the main file does not), checked
 * by opening the copy and running `PRAGMA integrity_check`, and restored into a stopped server's
 * data dir. Files and sidecars as snapshots.ts names them.
 */
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readlink, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { AgentError } from '@nodelet/base';
import { sha256File, snapshotFileName, verifySnapshot, writeSidecar, type SnapshotInfo } from './snapshots.js';

/** The store's revision (its newest row) and its live keys, read from a database file. */
function revisionAndObjects(db: Database.Database): { revision: number; objects: number } {
  const revision = (db.prepare('SELECT COALESCE(MAX(id), 0) AS r FROM kine').get() as { r: number }).r;
  // A key is live when its newest row is not a deletion.
  const objects = (db.prepare('SELECT COUNT(*) AS n FROM kine k WHERE k.deleted = 0 AND k.id = (SELECT MAX(id) FROM kine WHERE name = k.name)').get() as { n: number }).n;
  return { revision, objects };
}

/**
 * Takes a snapshot of the SQLite store at `dbPath` (which a running server may be writing) into
 * `dir`. The copy is made in one backup step, that is in one read transaction, so it is the store
 * as of one revision: every write acknowledged before that revision is in it.
 */
export async function saveSqliteSnapshot(o: { dbPath: string; dir: string; server: string; now?: Date }): Promise<SnapshotInfo & { path: string }> {
  if (!existsSync(o.dbPath)) throw new AgentError('ERR_NOT_FOUND', `no SQLite store at ${o.dbPath}`);
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const at = o.now ?? new Date();
  const file = snapshotFileName(o.server, 'sqlite', at);
  const path = join(o.dir, file);
  const tmp = `${path}.part-${process.pid}`;
  const src = new Database(o.dbPath, { readonly: true, fileMustExist: true });
  try {
    src.pragma('busy_timeout = 10000');
    // The first step only opens the backup; the progress callback then asks for every page at once.
    await src.backup(tmp, { progress: () => 0x7fffffff });
  } catch (err) {
    await rm(tmp, { force: true });
    throw new AgentError('ERR_UNAVAILABLE', `SQLite backup of ${o.dbPath} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    src.close();
  }
  let counts: { revision: number; objects: number };
  try {
    await chmod(tmp, 0o600);
    const copy = new Database(tmp, { readonly: true, fileMustExist: true });
    try {
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new AgentError('ERR_INTERNAL', `the copy of ${o.dbPath} fails SQLite's integrity check: ${String(check)}`);
      counts = revisionAndObjects(copy);
    } finally {
      copy.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const info: SnapshotInfo = { file, kind: 'sqlite', server: o.server, createdAt: at.toISOString(), sha256: await sha256File(path), ...counts, bytes: (await stat(path)).size };
  await writeSidecar(o.dir, info);
  return { ...info, path };
}

/**
 * Restores a SQLite snapshot as the store of a stopped server: the snapshot is checked against its
 * sidecar, copied beside the target and renamed over it (0600), and the old store's WAL and shared
 * memory files are removed so SQLite cannot replay them over the restored file. Refuses while the
 * store is open (a running server holds the WAL's lock) and, unless `force`, over an existing store.
 */
export async function restoreSqliteSnapshot(o: { snapshot: string; dbPath: string; force?: boolean }): Promise<SnapshotInfo> {
  const info = await verifySnapshot(o.snapshot);
  if (info.kind !== 'sqlite') throw new AgentError('ERR_INVALID_ARGUMENT', `${o.snapshot} is an ${info.kind} snapshot; restore it with nodelet etcd snapshot restore`);
  if (existsSync(o.dbPath)) {
    if (!o.force) throw new AgentError('ERR_ALREADY_EXISTS', `${o.dbPath} exists; stop the server and pass --force to replace it`);
    const pid = await storeInUse(resolve(o.dbPath));
    if (pid !== undefined) throw new AgentError('ERR_FAILED_PRECONDITION', `${o.dbPath} is open in process ${pid} (a running server); stop it first`);
  }
  await mkdir(dirname(o.dbPath), { recursive: true, mode: 0o700 });
  const tmp = `${o.dbPath}.restore-${process.pid}`;
  await copyFile(o.snapshot, tmp);
  await chmod(tmp, 0o600);
  for (const f of [`${o.dbPath}-wal`, `${o.dbPath}-shm`]) await rm(f, { force: true });
  await rename(tmp, o.dbPath);
  return info;
}

/** The PID of a process that has the store (or its WAL) open, if any: a running server. */
async function storeInUse(dbPath: string): Promise<number | undefined> {
  const files = new Set([dbPath, `${dbPath}-wal`]);
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''); // closed meanwhile
      if (files.has(target)) return Number(pid);
    }
  }
  return undefined;
}
