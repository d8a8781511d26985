// The store file holds every Secret: it and its WAL/SHM files are owner-only, new or existing.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { createSqliteStore } from './sqlite-store.js';
import { enc } from '../testing/helpers.js';

const modeOf = (p: string): number => statSync(p).mode & 0o777;

it('a new store file and its -wal/-shm are created 0600; an existing 0644 store is narrowed at open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-sqlite-mode-'));
  const opened: Array<{ close(): Promise<void> }> = [];
  t.after(async () => {
    for (const o of opened) await o.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  const path = join(dir, 'state.db');
  const s = createSqliteStore({ path });
  opened.push(s);
  await s.create('/registry/secrets/default/a', enc('x'));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) assert.equal(modeOf(f).toString(8), '600', f);
  await s.close();
  opened.length = 0;

  // A store left by an earlier version (umask 022): every file readable by all.
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(f, 0o644);
    } catch {
      writeFileSync(f, '', { mode: 0o644 });
    }
  }
  const again = createSqliteStore({ path });
  opened.push(again);
  assert.ok(await again.get('/registry/secrets/default/a'));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) assert.equal(modeOf(f).toString(8), '600', f);
});
