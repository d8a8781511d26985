import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore, type SqliteStoreOptions } from '../sqlite/sqlite-store.js';
import type { Store } from '../types.js';

/** A SQLite store in a fresh temp dir; its `close()` also removes the dir. */
export function createTempSqliteStore(opts: Omit<SqliteStoreOptions, 'path'> = {}): Store & { path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-sqlite-'));
  const path = join(dir, 'state.db');
  const store = createSqliteStore({ ...opts, path });
  return {
    path,
    get: (...a) => store.get(...a),
    list: (...a) => store.list(...a),
    count: (...a) => store.count(...a),
    create: (...a) => store.create(...a),
    update: (...a) => store.update(...a),
    delete: (...a) => store.delete(...a),
    watch: (...a) => store.watch(...a),
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    compact: (rev) => store.compact(rev),
    close: async () => {
      try {
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
