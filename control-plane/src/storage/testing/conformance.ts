import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Store } from '../types.js';
import { runWatchConformance } from './conformance-watch.js';
import { dec, enc, rejectsWithCode, type MakeStore } from './helpers.js';

export type { MakeStore } from './helpers.js';

/**
 * The storage contract (types.ts), run against every backend by
 * control-plane/test/integration/storage-*.itest.ts. `makeStore` returns a fresh, empty view
 * (a new SQLite file, or a new key prefix on a shared etcd); each test closes its store.
 */
export function runStoreConformance(name: string, makeStore: MakeStore, opts: { skip?: string | false } = {}): void {
  const open = async (t: TestContext): Promise<Store> => {
    const store = await makeStore();
    t.after(() => store.close());
    return store;
  };

  describe(`${name}: store conformance`, { skip: opts.skip }, () => {
    it('create then get returns the value at the create revision', async (t) => {
      const s = await open(t);
      const rev = await s.create('/registry/pods/default/a', enc('v1'));
      assert.ok(rev > 0);
      const kv = await s.get('/registry/pods/default/a');
      assert.deepEqual({ ...kv, value: dec(kv?.value) }, { key: '/registry/pods/default/a', value: 'v1', createRevision: rev, modRevision: rev });
      assert.equal(await s.get('/registry/pods/default/missing'), undefined);
    });

    it('create of an existing key fails with ERR_ALREADY_EXISTS and writes nothing', async (t) => {
      const s = await open(t);
      const rev = await s.create('/registry/pods/default/a', enc('v1'));
      await rejectsWithCode(s.create('/registry/pods/default/a', enc('v2')), 'ERR_ALREADY_EXISTS');
      assert.equal(dec((await s.get('/registry/pods/default/a'))?.value), 'v1');
      assert.equal(await s.currentRevision(), rev);
    });

    it('update is compare-and-swap on modRevision', async (t) => {
      const s = await open(t);
      const r1 = await s.create('/registry/cm/ns/x', enc('v1'));
      const r2 = await s.update('/registry/cm/ns/x', enc('v2'), r1);
      assert.ok(r2 > r1);
      await rejectsWithCode(s.update('/registry/cm/ns/x', enc('stale'), r1), 'ERR_CONFLICT');
      await rejectsWithCode(s.update('/registry/cm/ns/nope', enc('v'), r2), 'ERR_NOT_FOUND');
      await rejectsWithCode(s.update('/registry/cm/ns/nope', enc('v'), 0), 'ERR_NOT_FOUND');
      const kv = await s.get('/registry/cm/ns/x');
      assert.deepEqual([dec(kv?.value), kv?.createRevision, kv?.modRevision], ['v2', r1, r2]);
      assert.equal(await s.currentRevision(), r2, 'failed updates must not consume revisions');
    });

    it('delete checks the expected revision, returns the last value, and allows re-create', async (t) => {
      const s = await open(t);
      const r1 = await s.create('/registry/cm/ns/x', enc('v1'));
      const r2 = await s.update('/registry/cm/ns/x', enc('v2'), r1);
      await rejectsWithCode(s.delete('/registry/cm/ns/x', r1), 'ERR_CONFLICT');
      const del = await s.delete('/registry/cm/ns/x', r2);
      assert.ok(del.revision > r2);
      assert.deepEqual([dec(del.kv.value), del.kv.modRevision, del.kv.createRevision], ['v2', r2, r1]);
      assert.equal(await s.get('/registry/cm/ns/x'), undefined);
      await rejectsWithCode(s.delete('/registry/cm/ns/x'), 'ERR_NOT_FOUND');
      await rejectsWithCode(s.update('/registry/cm/ns/x', enc('v3'), r2), 'ERR_NOT_FOUND');
      const r4 = await s.create('/registry/cm/ns/x', enc('again'));
      const kv = await s.get('/registry/cm/ns/x');
      assert.deepEqual([dec(kv?.value), kv?.createRevision, kv?.modRevision], ['again', r4, r4]);
      const plain = await s.delete('/registry/cm/ns/x');
      assert.equal(dec(plain.kv.value), 'again');
    });

    it('revisions strictly increase across keys, also for concurrent writers', async (t) => {
      const s = await open(t);
      const revs = await Promise.all(Array.from({ length: 32 }, (_, i) => s.create(`/registry/pods/ns/p${i}`, enc(String(i)))));
      assert.equal(new Set(revs).size, revs.length, 'every write gets its own revision');
      const sorted = [...revs].sort((a, b) => a - b);
      assert.equal(await s.currentRevision(), sorted.at(-1));
      const next = await s.update('/registry/pods/ns/p0', enc('x'), revs[0]!);
      assert.ok(next > sorted.at(-1)!);
      // Only one of many racing updates with the same expected revision may win.
      const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => s.update('/registry/pods/ns/p1', enc(`w${i}`), revs[1]!)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'ERR_CONFLICT');
    });

    it('list returns keys under the prefix only, sorted, with count', async (t) => {
      const s = await open(t);
      for (const k of ['/registry/pods/b/2', '/registry/pods/a/1', '/registry/podsx/z', '/registry/pod', '/registry/pods/a/0']) {
        await s.create(k, enc(k));
      }
      const res = await s.list('/registry/pods/');
      assert.deepEqual(res.items.map((i) => i.key), ['/registry/pods/a/0', '/registry/pods/a/1', '/registry/pods/b/2']);
      assert.equal(res.more, false);
      assert.equal(res.revision, await s.currentRevision());
      assert.equal(await s.count('/registry/pods/'), 3);
      assert.equal(await s.count('/registry/'), 5);
      assert.equal((await s.list('/registry/services/')).items.length, 0);
    });

    it('list at a revision shows the state at that revision', async (t) => {
      const s = await open(t);
      const ra = await s.create('/registry/cm/ns/a', enc('a1'));
      const rb = await s.create('/registry/cm/ns/b', enc('b1'));
      await s.update('/registry/cm/ns/a', enc('a2'), ra);
      await s.delete('/registry/cm/ns/b', rb);
      await s.create('/registry/cm/ns/c', enc('c1'));
      const old = await s.list('/registry/cm/', { revision: rb });
      assert.equal(old.revision, rb);
      assert.deepEqual(old.items.map((i) => `${i.key}=${dec(i.value)}`), ['/registry/cm/ns/a=a1', '/registry/cm/ns/b=b1']);
      const now = await s.list('/registry/cm/');
      assert.deepEqual(now.items.map((i) => `${i.key}=${dec(i.value)}`), ['/registry/cm/ns/a=a2', '/registry/cm/ns/c=c1']);
      await rejectsWithCode(s.list('/registry/cm/', { revision: now.revision + 1000 }), 'ERR_INVALID_ARGUMENT');
    });

    it('pagination reads one snapshot across pages while writes happen', async (t) => {
      const s = await open(t);
      const revs = new Map<string, number>();
      for (let i = 0; i < 10; i++) {
        const k = `/registry/pods/ns/p${String(i).padStart(2, '0')}`;
        revs.set(k, await s.create(k, enc(`v${i}`)));
      }
      const snapshot = (await s.list('/registry/pods/')).items.map((i) => `${i.key}=${dec(i.value)}`);
      const first = await s.list('/registry/pods/', { limit: 4 });
      assert.equal(first.items.length, 4);
      assert.equal(first.more, true);
      assert.equal(first.remaining, 6);
      const seen = [...first.items];
      let page = first;
      let round = 0;
      while (page.more) {
        // Writes between pages: an update, a delete and a create, all after the snapshot.
        round++;
        const k = seen.at(-1)!.key.replace(/p(\d+)$/, (_, n: string) => `p${String(Number(n) + 1).padStart(2, '0')}`);
        if (round === 1) await s.update(k, enc('changed'), revs.get(k)!);
        if (round === 2) await s.delete(k);
        await s.create(`/registry/pods/ns/p${round}a`, enc('new'));
        page = await s.list('/registry/pods/', { limit: 4, revision: first.revision, startAfter: seen.at(-1)!.key });
        assert.equal(page.revision, first.revision);
        seen.push(...page.items);
      }
      assert.deepEqual(seen.map((i) => `${i.key}=${dec(i.value)}`), snapshot);
      assert.equal((await s.list('/registry/pods/')).items.length, 10 - 1 + round);
    });

    it('rejects empty keys and negative revisions with ERR_INVALID_ARGUMENT', async (t) => {
      const s = await open(t);
      await rejectsWithCode(s.create('', enc('x')), 'ERR_INVALID_ARGUMENT');
      await rejectsWithCode(s.update('/registry/a', enc('x'), -1), 'ERR_INVALID_ARGUMENT');
      await rejectsWithCode(s.list('/registry/', { revision: -5 }), 'ERR_INVALID_ARGUMENT');
    });

    it('close is idempotent', async () => {
      const s = await makeStore();
      await s.close();
      await s.close();
    });
  });

  runWatchConformance(name, open, opts.skip);
}
