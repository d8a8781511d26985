import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { AgentError } from '@nodelet/base';
import { SCHEMA } from './schema.js';
import { toStorageError } from './sqlite-errors.js';

/**
 * Opens (creating if needed) the store's file with the settings durability depends on — WAL and
 * `synchronous = FULL`, so a committed transaction survives `kill -9` and power loss — and
 * closes it again if either is refused. Both the main thread's connection and the writer
 * thread's open it this way (synchronous is a per-connection setting).
 */
export function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  let db: Database.Database | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    restrictFileModes(path);
    db = new Database(path);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    db.pragma('synchronous = FULL');
    if (mode !== 'wal' || db.pragma('synchronous', { simple: true }) !== 2) {
      throw new AgentError('ERR_FAILED_PRECONDITION', `SQLite at "${path}" refused WAL mode with synchronous=FULL`);
    }
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    db?.close();
    throw toStorageError(err, `cannot open SQLite store "${path}"`);
  }
}

/** Mode of the store's files: they hold every Secret, so only the server's user may read them. */
export const STORE_FILE_MODE = 0o600;

/**
 * Creates the database file owner-only before SQLite opens it (SQLite gives its `-wal` and
 * `-shm` files the database file's mode) and narrows the files of an existing store, which
 * earlier versions left at the umask's 0644.
 */
function restrictFileModes(path: string): void {
  if (path === ':memory:' || path === '') return;
  if (!existsSync(path)) closeSync(openSync(path, 'a', STORE_FILE_MODE));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, STORE_FILE_MODE);
}
