// One store watch per resource however many API watchers there are, and close() ends them; the
// replay buffer is bounded in bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import { noopLogger, pollUntil } from '@nodelet/base';
import { Registry } from './registry.js';
import { findResource } from './resources.js';
import { WatchCache } from './watch-cache.js';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN } from './testing/test-server.js';

test('N watchers of a resource share one store watch; server close ends every watch', async (t) => {
  const inner = createTempSqliteStore();
  t.after(() => inner.close());
  const watchedPrefixes: string[] = [];
  const store: Store = { ...inner, watch: (prefix, opts) => (watchedPrefixes.push(prefix), inner.watch(prefix, opts)) };
  const srv = await startTestApiServer({ store });
  t.after(() => srv.close());
  const { url } = srv;
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const rv = ((await (await fetch(`${url}/api/v1/pods`, { headers })).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const streams = await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/api/v1/pods?watch=true&resourceVersion=${rv}`, { headers })));
  const firstLines = streams.map(async (r) => {
    const reader = r.body!.getReader();
    let text = '';
    while (!text.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    return { reader, line: text.split('\n')[0]! };
  });
  const pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
  const created = await fetch(`${url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(pod) });
  assert.equal(created.status, 201);
  const got = await Promise.all(firstLines);
  for (const g of got) assert.equal(JSON.parse(g.line).type, 'ADDED');
  assert.deepEqual(watchedPrefixes.filter((p) => p === '/registry/pods/'), ['/registry/pods/'], 'expected exactly one store watch for pods');
  await srv.close();
  for (const g of got) {
    let done = false;
    while (!done) ({ done } = await g.reader.read());
  }
});

test('the cache is bounded by stored bytes as well as events: rewriting a large object evicts the oldest events', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', 'configmaps')!, store);
  const cache = new WatchCache({ store, registry, logger: noopLogger, capacityBytes: 1024 * 1024 });
  t.after(() => cache.close());
  const seen: number[] = [];
  const sub = await cache.subscribe(await store.currentRevision(), { onEvent: (e) => void seen.push(e.revision), onEnd: () => undefined });
  assert.ok(sub);
  const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default' }, data: { v: 'x'.repeat(100 * 1024) } };
  const first = Number((await registry.create(structuredClone(big))).metadata.resourceVersion);
  let last = first;
  for (let i = 0; i < 20; i++) {
    const r = await registry.guaranteedUpdate('default', 'big', (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { i: String(i) } } }));
    last = Number(r.object.metadata.resourceVersion);
  }
  await pollUntil('the cache to deliver the last update', () => seen.includes(last), { timeoutMs: 10_000, intervalMs: 10 });
  // 21 events of ~100 KiB (each update also holds the previous object) would be ~4 MiB.
  assert.ok(cache.bufferedBytes <= 1024 * 1024, `cache holds ${cache.bufferedBytes} bytes`);
  assert.ok(cache.bufferedBytes > 0);
  // A watcher from the first revision is no longer served from memory (the server watches the store)...
  assert.equal(await cache.subscribe(first, { onEvent: () => undefined, onEnd: () => undefined }), undefined);
  // ...while a recent one still is, and replays what followed it.
  const replayed: number[] = [];
  const recent = await cache.subscribe(last - 1, { onEvent: (e) => void replayed.push(e.revision), onEnd: () => undefined });
  assert.ok(recent);
  assert.deepEqual(replayed, [last]);
  sub.close();
  recent.close();
});

test('events are decoded when a subscriber reads them, once, and an update’s previous object only when read', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', 'configmaps')!, store);
  let decodes = 0;
  const decode = registry.decode.bind(registry);
  registry.decode = (...a) => (decodes++, decode(...a));
  const cache = new WatchCache({ store, registry, logger: noopLogger });
  t.after(() => cache.close());
  const events: Array<{ revision: number; object: unknown; hasPrev: boolean }> = [];
  const sub = await cache.subscribe(await store.currentRevision(), { onEvent: (e) => void events.push(e), onEnd: () => undefined });
  assert.ok(sub);
  // Another writer of the store (the cache's own registry hands out its writes undecoded: watch-cache-kept-writes.test.ts).
  const writer = new Registry(registry.def, store);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { v: '1' } };
  await writer.create(structuredClone(cm));
  const updated = await writer.guaranteedUpdate('default', 'c', (cur) => ({ ...cur, data: { v: '2' } }));
  const rv = Number(updated.object.metadata.resourceVersion);
  await pollUntil('the update event', () => events.at(-1)?.revision === rv, { timeoutMs: 5000 });
  assert.equal(decodes, 0, 'nothing decoded before a read');
  const [created, update] = events as unknown as Array<{ object: { data: { v: string } }; prev?: { data: { v: string } }; hasPrev: boolean }>;
  assert.equal(created!.object.data.v, '1');
  assert.equal(update!.object.data.v, '2');
  assert.equal(update!.object, update!.object, 'decoded once, then the same object');
  assert.equal(update!.hasPrev, true);
  assert.equal(decodes, 2);
  assert.equal(update!.prev?.data.v, '1');
  assert.equal(created!.hasPrev, false);
  assert.equal(created!.prev, undefined);
  assert.equal(decodes, 3);
  sub.close();
});
