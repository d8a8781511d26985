import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbortError, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { InMemoryApiServer } from '../testing/index.js';
import { PODS } from '../types/resources.js';
import type { Pod } from '../types/index.js';
import { Informer, objectKey } from './informer.js';

const pod = (name: string, nodeName?: string): Pod => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'busybox' }], nodeName },
});


interface Recorder {
  events: string[];
  handlers: { onAdd(p: Pod): void; onUpdate(o: Pod, n: Pod): void; onDelete(p: Pod): void };
}

function recorder(): Recorder {
  const events: string[] = [];
  return {
    events,
    handlers: {
      onAdd: (p) => events.push(`add ${p.metadata.name}`),
      onUpdate: (o, n) => events.push(`update ${n.metadata.name} ${o.metadata.resourceVersion}->${n.metadata.resourceVersion}`),
      onDelete: (p) => events.push(`delete ${p.metadata.name}`),
    },
  };
}

async function setup(t: { after(fn: () => Promise<void>): void }, opts: Partial<ConstructorParameters<typeof Informer<Pod>>[0]> = {}) {
  const server = await InMemoryApiServer.start();
  const client = server.client();
  const informer = new Informer<Pod>({ client, resource: PODS, backoff: { initialMs: 10, maxMs: 50 }, ...opts });
  t.after(async () => {
    await informer.close();
    await server.close();
  });
  return { server, client, informer };
}

test('lists, syncs, then delivers watch events in order and keeps the cache', async (t) => {
  const { server, client, informer } = await setup(t);
  server.seed(PODS, pod('a'));
  server.seed(PODS, pod('b'));
  const rec = recorder();
  informer.on(rec.handlers);
  assert.equal(informer.hasSynced(), false);
  informer.start();
  informer.start();
  await informer.waitForSync();
  assert.deepEqual(rec.events, ['add a', 'add b']);
  assert.equal(informer.lastSyncResourceVersion, String(server.store.revision));
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  const watchReq = server.requests.find((r) => r.query.get('watch') === 'true');
  assert.equal(watchReq?.query.get('resourceVersion'), '2', 'watch starts at the list RV');
  assert.equal(watchReq?.query.get('allowWatchBookmarks'), 'true');

  await client.create(PODS, pod('c'));
  await client.patch(PODS, 'a', { metadata: { labels: { x: '1' } } }, { type: 'merge', namespace: 'default' });
  await client.delete(PODS, 'b', { namespace: 'default' });
  await pollUntil('three events', () => rec.events.length === 5, { timeoutMs: 3000, intervalMs: 5 });
  assert.deepEqual(rec.events.slice(2), ['add c', 'update a 1->4', 'delete b']);
  assert.deepEqual(informer.list().map(objectKey).sort(), ['default/a', 'default/c']);
  assert.equal(informer.get('default/a')?.metadata.labels?.x, '1');
  assert.equal(informer.get('default/b'), undefined);
});

test('a dropped watch resumes from the last resourceVersion without duplicates', async (t) => {
  const { server, client, informer } = await setup(t);
  const rec = recorder();
  informer.on(rec.handlers);
  informer.start();
  await informer.waitForSync();
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  await client.create(PODS, pod('a'));
  await pollUntil('add a', () => rec.events.length === 1, { timeoutMs: 3000, intervalMs: 5 });
  const rvBeforeDrop = informer.lastSyncResourceVersion;
  server.dropWatches();
  await client.create(PODS, pod('b')); // happens while disconnected: replayed from history
  await pollUntil('add b after re-watch', () => rec.events.length === 2, { timeoutMs: 3000, intervalMs: 5 });
  await pollUntil('re-watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  assert.deepEqual(rec.events, ['add a', 'add b']);
  const watches = server.requests.filter((r) => r.query.get('watch') === 'true');
  assert.equal(watches.length, 2);
  assert.equal(watches[1]?.query.get('resourceVersion'), rvBeforeDrop);
  assert.equal(server.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true').length, 1, 'no relist');
});

test('410 after compaction relists and emits synthetic deletes for vanished objects', async (t) => {
  const { server, informer } = await setup(t);
  server.seed(PODS, pod('a'));
  server.seed(PODS, pod('b'));
  const rec = recorder();
  informer.on(rec.handlers);
  informer.start();
  await informer.waitForSync();
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  // While the informer is disconnected: a is deleted, c created, b changed, history compacted.
  server.dropWatches();
  server.store.remove(PODS, 'default', 'a');
  server.seed(PODS, pod('c'));
  const b = server.store.mustGet(PODS, 'default', 'b') as Pod;
  server.store.update(PODS, { ...b, metadata: { ...b.metadata, labels: { v: '2' } } });
  server.store.compact();
  await pollUntil('relist events', () => rec.events.length === 5, { timeoutMs: 3000, intervalMs: 5 });
  assert.deepEqual(rec.events.slice(2).sort(), ['add c', 'delete a', `update b 2->5`]);
  assert.deepEqual(informer.list().map(objectKey).sort(), ['default/b', 'default/c']);
  assert.equal(server.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true').length, 2, 'relisted once');
  await pollUntil('watch after relist', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  assert.equal(server.requests.at(-1)?.query.get('resourceVersion'), String(server.store.revision));
});

test('an ERROR Expired event on a live watch and HTTP 410 both relist', async (t) => {
  const { server, informer } = await setup(t);
  informer.start();
  await informer.waitForSync();
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  const lists = (): number => server.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true').length;
  server.expireWatches();
  await pollUntil('relist after ERROR 410', () => lists() === 2, { timeoutMs: 3000, intervalMs: 5 });
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  server.failNext({ method: 'GET', path: '/api/v1/pods' }, { code: 410, reason: 'Expired' });
  server.dropWatches();
  await pollUntil('relist after HTTP 410', () => lists() >= 3, { timeoutMs: 3000, intervalMs: 5 });
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
});

test('list failures back off and retry until synced', async (t) => {
  const { server, informer } = await setup(t);
  server.seed(PODS, pod('a'));
  server.failNext({ method: 'GET' }, { code: 500 }, 2);
  informer.start();
  await informer.waitForSync();
  assert.equal(informer.list().length, 1);
  assert.equal(server.requests.filter((r) => r.method === 'GET').length >= 3, true);
});

test('selectors: an object leaving the field selector is deleted from the cache', async (t) => {
  const { server, client, informer } = await setup(t, { fieldSelector: 'spec.nodeName=n1' });
  server.seed(PODS, pod('mine', 'n1'));
  server.seed(PODS, pod('other', 'n2'));
  const rec = recorder();
  informer.on(rec.handlers);
  informer.start();
  await informer.waitForSync();
  assert.deepEqual(rec.events, ['add mine']);
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  await client.delete(PODS, 'mine', { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil('delete', () => rec.events.length === 2, { timeoutMs: 3000, intervalMs: 5 });
  assert.deepEqual(informer.list(), []);
});

test('late handlers get the cache replayed; throwing handlers do not stop delivery', async (t) => {
  const { server, client, informer } = await setup(t);
  server.seed(PODS, pod('a'));
  informer.on({ onAdd: () => { throw new Error('boom'); } });
  informer.start();
  await informer.waitForSync();
  const rec = recorder();
  const sub = informer.on(rec.handlers);
  assert.deepEqual(rec.events, ['add a']);
  await pollUntil('watch', () => server.watchCount === 1, { timeoutMs: 3000, intervalMs: 5 });
  await client.create(PODS, pod('b'));
  await pollUntil('add b', () => rec.events.length === 2, { timeoutMs: 3000, intervalMs: 5 });
  sub.dispose();
  await client.create(PODS, pod('c'));
  await pollUntil('c cached', () => informer.list().length === 3, { timeoutMs: 3000, intervalMs: 5 });
  assert.deepEqual(rec.events, ['add a', 'add b']);
});

test('waitForSync honours its signal; close is idempotent and rejects pending waiters', async (t) => {
  const { server, informer } = await setup(t);
  server.failNext({ method: 'GET' }, { code: 500 }, 1000);
  informer.start();
  const ac = new AbortController();
  const w1 = informer.waitForSync(ac.signal);
  ac.abort();
  await assert.rejects(w1, (e) => isAbortError(e));
  // Attach the expectation before closing: close() rejects w2 while it runs.
  const w2 = assert.rejects(informer.waitForSync(), (e) => isAbortError(e));
  await Promise.all([informer.close(), informer.close()]);
  await w2;
  await assert.rejects(informer.waitForSync(), (e) => isAbortError(e));
  assert.equal(informer.hasSynced(), false);
});

test('resync re-delivers cached objects as updates on the injected clock', async (t) => {
  const clock = new FakeClock();
  const { server, informer } = await setup(t, { clock, resyncMs: 60_000 });
  server.seed(PODS, pod('a'));
  const rec = recorder();
  informer.on(rec.handlers);
  informer.start();
  await informer.waitForSync();
  clock.advance(59_999);
  assert.deepEqual(rec.events, ['add a']);
  clock.advance(1);
  assert.deepEqual(rec.events, ['add a', 'update a 1->1']);
  clock.advance(60_000);
  assert.equal(rec.events.length, 3);
  await informer.close();
  clock.advance(60_000);
  assert.equal(rec.events.length, 3, 'no handler calls after close');
});
