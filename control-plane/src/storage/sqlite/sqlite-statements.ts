import type Database from 'better-sqlite3';
import { COMPACT_REV_KEY, type Row } from './schema.js';

export interface InsertFields {
  created?: 0 | 1;
  deleted?: 0 | 1;
  createRevision: number;
  prevRevision: number;
  value: Uint8Array | null;
  oldValue?: Uint8Array | null;
}

/** better-sqlite3 binds Buffers, not plain Uint8Arrays; this views the same memory. */
function blob(v: Uint8Array | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Live rows of a key range at a revision: the newest row per name at or below it, not a tombstone. */
function liveAt(hasEnd: boolean): string {
  return `k.name >= @lo ${hasEnd ? 'AND k.name < @hi' : ''} AND k.name > @after AND k.id <= @rev
    AND k.id = (SELECT MAX(k2.id) FROM kine k2 WHERE k2.name = k.name AND k2.id <= @rev)
    AND k.deleted = 0`;
}

/**
 * The prepared statements of the SQLite store. Every method is synchronous; callers wrap
 * multi-statement reads in `readTx` (one WAL snapshot) and writes in `writeTx` (BEGIN IMMEDIATE,
 * so the compare and the insert happen under the write lock).
 */
export class SqliteStatements {
  readonly #latest: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #seq: Database.Statement;
  readonly #getMeta: Database.Statement;
  readonly #setMeta: Database.Statement;
  readonly #rowsAfter: Database.Statement;
  readonly #compact: Database.Statement;
  readonly #list: Database.Statement[];
  readonly #count: Database.Statement[];
  readonly #rowsUnder: Database.Statement[];
  readonly #tx: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(db: Database.Database) {
    this.#latest = db.prepare('SELECT * FROM kine WHERE name = ? ORDER BY id DESC LIMIT 1');
    this.#insert = db.prepare(
      `INSERT INTO kine (name, created, deleted, create_revision, prev_revision, lease, value, old_value)
       VALUES (@name, @created, @deleted, @createRevision, @prevRevision, 0, @value, @oldValue)`,
    );
    // AUTOINCREMENT never reuses ids, and sqlite_sequence keeps the highest one even after
    // compaction deleted that row, so this is the store's revision.
    this.#seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kine'").pluck();
    this.#getMeta = db.prepare('SELECT value FROM kine_meta WHERE key = ?').pluck();
    this.#setMeta = db.prepare(
      'INSERT INTO kine_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    );
    this.#rowsAfter = db.prepare('SELECT * FROM kine WHERE id > ? ORDER BY id LIMIT ?');
    this.#compact = db.prepare(
      `DELETE FROM kine WHERE id > @from AND id <= @to AND (deleted = 1
         OR id < (SELECT MAX(k2.id) FROM kine k2 WHERE k2.name = kine.name AND k2.id <= @rev))`,
    );
    this.#list = [false, true].map((e) => db.prepare(`SELECT k.* FROM kine k WHERE ${liveAt(e)} ORDER BY k.name LIMIT @limit`));
    this.#count = [false, true].map((e) => db.prepare(`SELECT COUNT(*) FROM kine k WHERE ${liveAt(e)}`).pluck());
    // `+name` keeps the planner on the rowid range: replays usually start at a recent revision.
    this.#rowsUnder = [false, true].map((e) =>
      db.prepare(
        `SELECT * FROM kine WHERE id > @after AND id <= @upTo AND +name >= @lo ${e ? 'AND +name < @hi' : ''}
         ORDER BY id LIMIT @limit`,
      ),
    );
    this.#tx = db.transaction((fn: () => unknown) => fn());
  }

  readTx<T>(fn: () => T): T {
    return this.#tx(fn) as T;
  }

  writeTx<T>(fn: () => T): T {
    return this.#tx.immediate(fn) as T;
  }

  /** Inside a transaction: runs `fn` in a SAVEPOINT, rolled back alone if it throws. */
  savepoint<T>(fn: () => T): T {
    return this.#tx(fn) as T;
  }

  latest(name: string): Row | undefined {
    return this.#latest.get(name) as Row | undefined;
  }

  /** Appends a row; returns its id (the new revision). */
  insert(name: string, f: InsertFields): number {
    const info = this.#insert.run({
      name,
      created: f.created ?? 0,
      deleted: f.deleted ?? 0,
      createRevision: f.createRevision,
      prevRevision: f.prevRevision,
      value: blob(f.value),
      oldValue: blob(f.oldValue),
    });
    return Number(info.lastInsertRowid);
  }

  currentRevision(): number {
    return (this.#seq.get() as number | undefined) ?? 0;
  }

  compactedRevision(): number {
    return (this.#getMeta.get(COMPACT_REV_KEY) as number | undefined) ?? 0;
  }

  setMeta(key: string, value: number): void {
    this.#setMeta.run(key, value);
  }

  rowsAfter(after: number, limit: number): Row[] {
    return this.#rowsAfter.all(after, limit) as Row[];
  }

  /** Live keys in [lo, hi) after `after`, sorted by name, at `rev`; `limit` -1 = all. */
  list(lo: string, hi: string | undefined, after: string, rev: number, limit: number): Row[] {
    return this.#list[hi === undefined ? 0 : 1]!.all({ lo, hi, after, rev, limit }) as Row[];
  }

  count(lo: string, hi: string | undefined, after: string, rev: number): number {
    return this.#count[hi === undefined ? 0 : 1]!.get({ lo, hi, after, rev }) as number;
  }

  /** Rows of any kind in [lo, hi) with after < id <= upTo, in id order. */
  rowsUnder(lo: string, hi: string | undefined, after: number, upTo: number, limit: number): Row[] {
    return this.#rowsUnder[hi === undefined ? 0 : 1]!.all({ lo, hi, after, upTo, limit }) as Row[];
  }

  /** Deletes superseded rows and tombstones with from < id <= to (rows at or below `rev`). */
  compactRange(from: number, to: number, rev: number): number {
    return this.#compact.run({ from, to, rev }).changes;
  }
}
