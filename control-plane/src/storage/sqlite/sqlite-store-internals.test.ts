// SQLite-only behaviour beyond the conformance suite: slow watchers, cross-connection watches,
// what compaction removes from the table, and the revision counter surviving compaction.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { compactKeeping } from '../compactor.js';
import { createSqliteStore } from './sqlite-store.js';
import { createTempSqliteStore } from '../testing/sqlite.js';
import { enc, rejectsWithCode, takeEvents } from '../testing/helpers.js';
import { pollUntil } from '@nodelet/base';
import { cleanups } from '@nodelet/base/testing';

describe('sqlite store internals', () => {
  it('a watcher slower than its queue limit falls back to reading the table and misses nothing', async (t) => {
    const s = createTempSqliteStore({ watchQueueLimit: 5 });
    t.after(() => s.close());
    const start = await s.currentRevision();
    const ac = new AbortController();
    t.after(() => ac.abort());
    const iter = s.watch('/registry/', { afterRevision: start, signal: ac.signal })[Symbol.asyncIterator]();
    const first = iter.next();
    const revs: number[] = [];
    for (let i = 0; i < 50; i++) revs.push(await s.create(`/registry/k${i}`, enc(String(i))));
    const got = [(await first).value!.revision];
    while (got.length < 50) got.push((await iter.next()).value!.revision);
    assert.deepEqual(got, revs);
    const live = iter.next();
    const rev = await s.create('/registry/after', enc('x'));
    assert.equal((await live).value!.revision, rev, 'back to live delivery after catching up');
  });

  it('an overflowed watcher whose history was compacted meanwhile gets ERR_GONE', async (t) => {
    const s = createTempSqliteStore({ watchQueueLimit: 5 });
    t.after(() => s.close());
    const start = await s.create('/registry/a', enc('0'));
    const ac = new AbortController();
    t.after(() => ac.abort());
    const iter = s.watch('/registry/', { afterRevision: start, signal: ac.signal })[Symbol.asyncIterator]();
    const first = iter.next();
    let rev = start;
    for (let i = 1; i <= 20; i++) rev = await s.update('/registry/a', enc(String(i)), rev);
    await s.compact(rev);
    assert.equal((await first).value!.revision, start + 1, 'the queued event is still delivered');
    await rejectsWithCode(iter.next(), 'ERR_GONE');
  });

  it('a second connection to the same file sees writes through the poll', async (t) => {
    const a = createTempSqliteStore();
    t.after(() => a.close());
    const b = createSqliteStore({ path: a.path, pollIntervalMs: 20 });
    t.after(() => b.close());
    let rev = 0;
    const [ev] = await takeEvents(b, '/registry/', await b.currentRevision(), 1, {
      onStarted: async () => {
        rev = await a.create('/registry/x', enc('from a'));
      },
    });
    assert.equal(ev!.revision, rev);
  });

  it('writes in one tick share a commit, but a failed compare-and-swap rolls back only itself', async (t) => {
    const s = createTempSqliteStore();
    t.after(() => s.close());
    const results = await Promise.allSettled([
      s.create('/registry/a', enc('1')),
      s.create('/registry/a', enc('dup')),
      s.create('/registry/b', enc('2')),
      s.update('/registry/a', enc('3'), 1),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code?: string }).code)),
      [1, 'ERR_ALREADY_EXISTS', 2, 3],
    );
    assert.equal((await s.get('/registry/a'))?.modRevision, 3);
  });

  it('close with writes in flight: each write either resolves and is stored, or rejects with ERR_UNAVAILABLE', async (t) => {
    const cleanup = cleanups(t);
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-sqlite-'));
    cleanup(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');
    const s = createSqliteStore({ path });
    await s.create('/registry/first', enc('0'));
    const writes = Array.from({ length: 50 }, (_, i) => s.create(`/registry/k${i}`, enc(String(i))));
    // After a turn of the loop the first batch is committing on the writer thread.
    await new Promise((r) => setImmediate(r));
    const more = Array.from({ length: 50 }, (_, i) => s.create(`/registry/m${i}`, enc(String(i))));
    const outcomes = Promise.allSettled([...writes, ...more]);
    await s.close();
    const settled = await outcomes;
    const b = createSqliteStore({ path });
    cleanup(() => b.close());
    let stored = 0;
    for (const [i, r] of settled.entries()) {
      const key = i < 50 ? `/registry/k${i}` : `/registry/m${i - 50}`;
      if (r.status === 'rejected') {
        assert.equal((r.reason as { code?: string }).code, 'ERR_UNAVAILABLE');
        continue;
      }
      assert.equal((await b.get(key))?.modRevision, r.value, `acknowledged write ${key} is stored`);
      stored++;
    }
    assert.ok(stored >= 50, `the batch sent before close() committed (${stored} stored)`);
  });

  it('compaction deletes superseded rows and tombstones, keeps the revision counter', async (t) => {
    const s = createTempSqliteStore();
    t.after(() => s.close());
    let rev = await s.create('/registry/a', enc('0'));
    for (let i = 1; i < 10; i++) rev = await s.update('/registry/a', enc(String(i)), rev);
    await s.create('/registry/b', enc('b'));
    const deleted = await s.delete('/registry/b');
    assert.equal(deleted.revision, await s.currentRevision());
    await s.compact(deleted.revision);
    const db = new Database(s.path, { readonly: true });
    t.after(() => db.close());
    const rows = db.prepare('SELECT name, id FROM kine ORDER BY id').all();
    assert.deepEqual(rows, [{ name: '/registry/a', id: rev }]);
    // The newest row (the tombstone) is gone, but revisions never go back.
    assert.equal(await s.currentRevision(), deleted.revision);
    assert.ok((await s.create('/registry/c', enc('c'))) > deleted.revision);
  });

  it('compactKeeping compacts to current minus the kept revisions, once', async (t) => {
    const s = createTempSqliteStore();
    t.after(() => s.close());
    let rev = await s.create('/registry/a', enc('0'));
    for (let i = 1; i < 30; i++) rev = await s.update('/registry/a', enc(String(i)), rev);
    assert.equal(await compactKeeping(s, 10), rev - 10);
    assert.equal(await s.compactedRevision(), rev - 10);
    assert.equal(await compactKeeping(s, 10), undefined, 'nothing new to compact');
    assert.equal(await compactKeeping(s, 1000), undefined, 'history shorter than the kept window');
  });

  it('the background compactor runs on its interval', async (t) => {
    const s = createTempSqliteStore({ compactor: { intervalMs: 20, keepRevisions: 2 } });
    t.after(() => s.close());
    let rev = await s.create('/registry/a', enc('0'));
    for (let i = 1; i < 10; i++) rev = await s.update('/registry/a', enc(String(i)), rev);
    await pollUntil('background compaction', async () => (await s.compactedRevision()) === rev - 2, { timeoutMs: 5000, intervalMs: 10 });
  });

  it('operations after close fail with ERR_UNAVAILABLE; open watches end with it', async (t) => {
    const s = createTempSqliteStore();
    const ac = new AbortController();
    t.after(() => ac.abort());
    const iter = s.watch('/registry/', { afterRevision: 0, signal: ac.signal })[Symbol.asyncIterator]();
    const pending = iter.next();
    await s.close();
    await rejectsWithCode(pending, 'ERR_UNAVAILABLE');
    await rejectsWithCode(s.get('/registry/a'), 'ERR_UNAVAILABLE');
  });
});
