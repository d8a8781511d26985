// The storage conformance suite against a real etcd (Debian's etcd-server), started privately on
// loopback for this file. Every store gets its own key prefix on that etcd.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { createEtcdStore } from '../../src/storage/index.js';
import { runStoreConformance } from '../../src/storage/testing/conformance.js';
import { etcdForFile, startTestEtcd } from '../../src/storage/testing/etcd.js';
import { rejectsWithCode } from '../../src/storage/testing/helpers.js';

const { skip, etcd } = etcdForFile();

runStoreConformance('etcd', async () => createEtcdStore({ endpoints: [etcd().endpoint], prefix: `/t-${randomUUID()}` }), { skip });

describe('etcd: failures', { skip }, () => {
  it('keys are stored as given under the prefix (kube-apiserver layout)', async (t) => {
    const prefix = `/t-${randomUUID()}`;
    const store = createEtcdStore({ endpoints: [etcd().endpoint], prefix });
    t.after(() => store.close());
    const raw = createEtcdStore({ endpoints: [etcd().endpoint] });
    t.after(() => raw.close());
    await store.create('/registry/deployments/default/web', Buffer.from('{}'));
    const kv = await raw.get(`${prefix}/registry/deployments/default/web`);
    assert.equal(Buffer.from(kv!.value).toString(), '{}');
  });

  it('a watch started on a closed store fails with ERR_UNAVAILABLE instead of retrying', async () => {
    const store = createEtcdStore({ endpoints: [etcd().endpoint], prefix: `/t-${randomUUID()}` });
    const iter = store.watch('/registry/', { afterRevision: 0, signal: new AbortController().signal })[Symbol.asyncIterator]();
    await store.close();
    await rejectsWithCode(iter.next(), 'ERR_UNAVAILABLE');
  });

  it('a stopped etcd gives ERR_UNAVAILABLE quickly', async (t) => {
    const own = await startTestEtcd();
    t.after(() => own.stop());
    const store = createEtcdStore({ endpoints: [own.endpoint], requestTimeoutMs: 3000 });
    t.after(() => store.close());
    await store.create('/registry/a', Buffer.from('x'));
    await own.stop();
    const started = Date.now();
    await rejectsWithCode(store.get('/registry/a'), 'ERR_UNAVAILABLE');
    assert.ok(Date.now() - started < 5000);
  });
});

describe('etcd: restart', { skip }, () => {
  it('a live watch resumes after etcd restarts, and revisions keep increasing', async (t) => {
    const own = await startTestEtcd();
    t.after(() => own.stop());
    const store = createEtcdStore({ endpoints: [own.endpoint], requestTimeoutMs: 3000 });
    t.after(() => store.close());
    const r1 = await store.create('/registry/cm/ns/a', Buffer.from('1'));
    const ac = new AbortController();
    t.after(() => ac.abort());
    const iter = store.watch('/registry/cm/', { afterRevision: r1 - 1, signal: ac.signal })[Symbol.asyncIterator]();
    assert.equal((await iter.next()).value?.revision, r1);

    await own.restart();
    // The client may need a moment (and its circuit breaker a reset) to reach the new process:
    // "unavailable" is "not yet"; any other error ends the wait.
    const r2 = await pollUntil('the update to reach the restarted etcd', () => store.update('/registry/cm/ns/a', Buffer.from('2'), r1), {
      timeoutMs: 20_000,
      intervalMs: 200,
      fatal: (err) => (err as { code?: string }).code !== 'ERR_UNAVAILABLE',
    });
    assert.ok(r2 > r1);
    const next = await Promise.race([
      iter.next(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('watch did not resume within 20 s')), 20_000).unref()),
    ]);
    assert.equal(next.value?.revision, r2);
    assert.equal(Buffer.from(next.value!.prevKv!.value).toString(), '1');
  });
});
