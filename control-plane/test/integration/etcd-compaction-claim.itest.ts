// Compaction with several servers on one etcd: one server compacts per interval (kube-apiserver's
// compact_rev_key protocol, storage/etcd/etcd-compaction-claim.ts). A private etcd on loopback.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { RecordingLogger } from '@nodelet/base/testing';
import { createEtcdStore } from '../../src/storage/index.js';
import { etcdForFile } from '../../src/storage/testing/etcd.js';

const { skip, etcd } = etcdForFile();

type Claimer = { claimCompaction(): Promise<boolean> };

describe('etcd: compaction claim', { skip }, () => {
  it('one of two servers wins each round; the other takes over when the winner stops', async (t) => {
    const prefix = `/t-${randomUUID()}`;
    const [a, b] = [createEtcdStore({ endpoints: [etcd().endpoint], prefix }), createEtcdStore({ endpoints: [etcd().endpoint], prefix })];
    const raw = createEtcdStore({ endpoints: [etcd().endpoint] });
    t.after(() => Promise.all([a.close(), b.close(), raw.close()]));
    const ca = a as unknown as Claimer;
    const cb = b as unknown as Claimer;
    // Rounds: each server ticks once per interval; a started first.
    assert.equal(await ca.claimCompaction(), true, 'the first server claims the first interval');
    assert.equal(await cb.claimCompaction(), false, 'a server that just started loses its first round');
    for (let round = 0; round < 3; round++) {
      assert.equal(await ca.claimCompaction(), true);
      assert.equal(await cb.claimCompaction(), false, `round ${round}: b learns a compacted`);
    }
    // a dies: b's next round succeeds.
    assert.equal(await cb.claimCompaction(), true, 'b takes over once a stops');
    assert.equal(await cb.claimCompaction(), true);
    const kv = await raw.list(prefix);
    const claim = kv.items.find((i) => i.key === `${prefix}compact_rev_key`);
    assert.ok(claim, `compact_rev_key under the prefix (keys: ${kv.items.map((i) => i.key).join(', ')})`);
    assert.ok(Number(Buffer.from(claim.value).toString()) > 0, 'its value is the revision at the claim');
  });

  it('two background compactors on one etcd: one compaction per interval between them', async (t) => {
    const prefix = `/t-${randomUUID()}`;
    const logs = { a: new RecordingLogger(), b: new RecordingLogger() };
    const compactionsBy = (n: 'a' | 'b'): number => logs[n].find(/^Storage compacted$/).length;
    const writer = createEtcdStore({ endpoints: [etcd().endpoint], prefix });
    t.after(() => writer.close());
    for (let i = 0; i < 30; i++) await writer.create(`/registry/configmaps/default/c${i}`, Buffer.from('x'));
    const stores = (['a', 'b'] as const).map((n) => createEtcdStore({ endpoints: [etcd().endpoint], prefix, logger: logs[n], compactor: { intervalMs: 300, keepRevisions: 1 } }));
    t.after(() => Promise.all(stores.map((s) => s.close())));
    let i = 30;
    await pollUntil('six compactions', async () => {
      await writer.create(`/registry/configmaps/default/c${i++}`, Buffer.from('x'));
      return compactionsBy('a') + compactionsBy('b') >= 6;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    // Each server ticks once per interval; per interval one of them wins (either may), so about
    // half the rounds compact and half are skipped, instead of every round compacting.
    const compacted = compactionsBy('a') + compactionsBy('b');
    const skipped = logs.a.find(/^Another server compacts this interval$/).length + logs.b.find(/^Another server compacts this interval$/).length;
    assert.ok(skipped >= compacted - 2, `rounds skipped ${skipped}, compacted ${compacted}`);
  });
});
