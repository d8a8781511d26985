import { mkdirSync } from 'node:fs';
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
    mkdirSync(dirname(path), { recursive: true });
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
