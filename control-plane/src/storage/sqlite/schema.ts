import type { KeyValue, WatchEvent } from '../types.js';

/**
 * kine's log-structured layout (pkg/drivers/sqlite): every write appends one row and the row id
 * is the global revision. A row carries everything a watch event needs (the previous value in
 * `old_value`, the previous row in `prev_revision`), so events survive compaction of the rows
 * they replaced. `created` rows store `create_revision = 0` and mean "created at my own id".
 * UNIQUE(name, prev_revision) makes two writers that read the same latest row collide even if
 * they bypassed the IMMEDIATE transaction (e.g. another process on an old schema).
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS kine (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  lease INTEGER NOT NULL DEFAULT 0,
  value BLOB,
  old_value BLOB
);
CREATE INDEX IF NOT EXISTS kine_name_id_index ON kine (name, id);
CREATE UNIQUE INDEX IF NOT EXISTS kine_name_prev_revision_uindex ON kine (name, prev_revision);
CREATE TABLE IF NOT EXISTS kine_meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
`;

/** kine_meta key holding the compacted revision (reads/watches below it are ERR_GONE). */
export const COMPACT_REV_KEY = 'compact_rev';

export interface Row {
  id: number;
  name: string;
  created: number;
  deleted: number;
  create_revision: number;
  prev_revision: number;
  value: Buffer | null;
  old_value: Buffer | null;
}

const EMPTY = new Uint8Array(0);

export function createRevisionOf(row: Row): number {
  return row.created ? row.id : row.create_revision;
}

/** The key's value as written by this (non-tombstone) row. */
export function rowToKv(row: Row): KeyValue {
  return { key: row.name, value: row.value ?? EMPTY, createRevision: createRevisionOf(row), modRevision: row.id };
}

/** The value this row replaced (update) or removed (delete). */
function previousKv(row: Row, value: Uint8Array): KeyValue {
  return { key: row.name, value, createRevision: createRevisionOf(row), modRevision: row.prev_revision };
}

/**
 * The watch event a row stands for. A tombstone stores the removed value in `value`, so a DELETE
 * carries the last value (with its own modRevision) in both `kv` and `prevKv`.
 */
export function rowToEvent(row: Row): WatchEvent {
  if (row.deleted) {
    const last = previousKv(row, row.value ?? EMPTY);
    return { type: 'DELETE', kv: last, prevKv: last, revision: row.id, isCreate: false };
  }
  if (row.created) return { type: 'PUT', kv: rowToKv(row), revision: row.id, isCreate: true };
  return { type: 'PUT', kv: rowToKv(row), prevKv: previousKv(row, row.old_value ?? EMPTY), revision: row.id, isCreate: false };
}
