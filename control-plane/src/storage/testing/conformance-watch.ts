import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Store } from '../types.js';
import { dec, enc, rejectsWithCode, summarize, takeEvents } from './helpers.js';

/** Watch and compaction half of the conformance suite (see conformance.ts). */
export function runWatchConformance(name: string, open: (t: TestContext) => Promise<Store>, skip?: string | false): void {
  describe(`${name}: watch and compaction conformance`, { skip }, () => {
    it('watch replays history after a revision, then delivers live events, in revision order', async (t) => {
      const s = await open(t);
      const r1 = await s.create('/registry/cm/ns/a', enc('a1'));
      const r2 = await s.update('/registry/cm/ns/a', enc('a2'), r1);
      const r3 = await s.create('/registry/cm/ns/b', enc('b1'));
      await s.create('/registry/other/x', enc('not watched'));
      let r5 = 0;
      let r6 = 0;
      const events = await takeEvents(s, '/registry/cm/', r1, 4, {
        onStarted: async () => {
          r5 = (await s.delete('/registry/cm/ns/a')).revision;
          r6 = await s.create('/registry/cm/ns/c', enc('c1'));
        },
      });
      assert.deepEqual(events.map(summarize), [
        `PUT /registry/cm/ns/a=a2@${r2} prev=a1@${r1}`,
        `PUT+ /registry/cm/ns/b=b1@${r3}`,
        `DELETE /registry/cm/ns/a=a2@${r5} prev=a2@${r2}`,
        `PUT+ /registry/cm/ns/c=c1@${r6}`,
      ]);
      const del = events[2]!;
      assert.equal(del.kv.modRevision, r2, 'a DELETE carries the last value with its own revision');
      assert.equal(del.kv.createRevision, r1);
      assert.equal(events[0]!.kv.createRevision, r1);
      assert.equal(events[0]!.isCreate, false);
    });

    it('watch from the current revision sees only new events', async (t) => {
      const s = await open(t);
      await s.create('/registry/cm/ns/old', enc('old'));
      const now = await s.currentRevision();
      let rev = 0;
      const [ev] = await takeEvents(s, '/registry/cm/', now, 1, {
        onStarted: async () => {
          rev = await s.create('/registry/cm/ns/new', enc('new'));
        },
      });
      assert.equal(summarize(ev!), `PUT+ /registry/cm/ns/new=new@${rev}`);
    });

    it('many watchers each see every event once', async (t) => {
      const s = await open(t);
      const start = await s.currentRevision();
      const watchers = Array.from({ length: 20 }, () => takeEvents(s, '/registry/pods/', start, 10));
      const revs: number[] = [];
      for (let i = 0; i < 10; i++) revs.push(await s.create(`/registry/pods/ns/p${i}`, enc(String(i))));
      for (const events of await Promise.all(watchers)) assert.deepEqual(events.map((e) => e.revision), revs);
    });

    it('aborting the signal ends the watch', async (t) => {
      const s = await open(t);
      const ac = new AbortController();
      const iter = s.watch('/registry/', { afterRevision: await s.currentRevision(), signal: ac.signal })[Symbol.asyncIterator]();
      const pending = iter.next();
      ac.abort();
      const r = await pending;
      assert.equal(r.done, true);
    });

    it('compaction keeps current values and makes older revisions ERR_GONE', async (t) => {
      const s = await open(t);
      const ra = await s.create('/registry/cm/ns/a', enc('a1'));
      const ra2 = await s.update('/registry/cm/ns/a', enc('a2'), ra);
      const rb = await s.create('/registry/cm/ns/b', enc('b1'));
      await s.delete('/registry/cm/ns/b', rb);
      const rc = await s.create('/registry/cm/ns/c', enc('c1'));
      const rc2 = await s.update('/registry/cm/ns/c', enc('c2'), rc);
      await s.compact(rc);
      assert.equal(await s.compactedRevision(), rc);
      await s.compact(rc); // idempotent
      const now = await s.list('/registry/cm/');
      assert.deepEqual(now.items.map((i) => `${i.key}=${dec(i.value)}@${i.modRevision}`), [
        `/registry/cm/ns/a=a2@${ra2}`,
        `/registry/cm/ns/c=c2@${rc2}`,
      ]);
      assert.equal(dec((await s.get('/registry/cm/ns/a'))?.value), 'a2');
      const atCompact = await s.list('/registry/cm/', { revision: rc });
      assert.deepEqual(atCompact.items.map((i) => `${i.key}=${dec(i.value)}`), ['/registry/cm/ns/a=a2', '/registry/cm/ns/c=c1']);
      await rejectsWithCode(s.list('/registry/cm/', { revision: ra2 }), 'ERR_GONE');
      // Updates keep working on keys whose history was compacted.
      const ra3 = await s.update('/registry/cm/ns/a', enc('a3'), ra2);
      assert.ok(ra3 > rc2);
      await rejectsWithCode(s.compact((await s.currentRevision()) + 100), 'ERR_INVALID_ARGUMENT');
    });

    it('a watch from a compacted revision fails with ERR_GONE; from the compacted revision it works', async (t) => {
      const s = await open(t);
      const r1 = await s.create('/registry/cm/ns/a', enc('a1'));
      const r2 = await s.update('/registry/cm/ns/a', enc('a2'), r1);
      const r3 = await s.update('/registry/cm/ns/a', enc('a3'), r2);
      await s.compact(r2);
      await rejectsWithCode(takeEvents(s, '/registry/cm/', r1 - 1, 1), 'ERR_GONE');
      const [ev] = await takeEvents(s, '/registry/cm/', r2, 1);
      assert.equal(summarize(ev!), `PUT /registry/cm/ns/a=a3@${r3} prev=a2@${r2}`);
    });

    it('a live watch keeps working across a compaction', async (t) => {
      const s = await open(t);
      const r1 = await s.create('/registry/cm/ns/a', enc('a1'));
      let r3 = 0;
      const events = await takeEvents(s, '/registry/cm/', r1, 2, {
        onStarted: async () => {
          const r2 = await s.update('/registry/cm/ns/a', enc('a2'), r1);
          await s.compact(r2);
          r3 = await s.update('/registry/cm/ns/a', enc('a3'), r2);
        },
      });
      assert.deepEqual(events.map((e) => e.revision).at(-1), r3);
    });
  });
}
