// The pod watch cache files watchers by the spec.nodeName their field selector requires (the
// cacher's trigger): a node's watcher is handed its own pods' events only, and still every one of
// them, including a binding ("" → node) and a delete; watchers without that value get everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { ApiObject } from './object.js';
import { Registry } from './registry.js';
import { findResource } from './resources.js';
import { startTestApiServer } from './testing/test-server.js';
import { WatchCache, type CacheEvent } from './watch-cache.js';

const pod = (name: string, nodeName?: string): ApiObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x:1' }], ...(nodeName ? { nodeName } : {}) } }) as ApiObject;

test('a subscriber filed under a node is handed exactly the events of pods on that node, before and after', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', 'pods')!, store);
  const cache = new WatchCache({ store, registry, logger: noopLogger });
  t.after(() => cache.close());
  assert.equal(cache.triggerField, 'spec.nodeName');
  const start = await store.currentRevision();
  const seen = new Map<string, string[]>();
  const subscribe = async (label: string, from: number, trigger?: string) => {
    const got: string[] = [];
    seen.set(label, got);
    const sub = await cache.subscribe(from, { onEvent: (e: CacheEvent) => void got.push(`${e.kind} ${e.object.metadata.name}@${e.revision}`), onEnd: () => undefined }, trigger);
    assert.ok(sub);
    t.after(() => sub.close());
    return sub;
  };
  await subscribe('node-a', start, 'node-a');
  await subscribe('node-b', start, 'node-b');
  await subscribe('unbound', start, '');
  await subscribe('all', start);
  const closed = await subscribe('closed', start, 'node-a');
  closed.close();

  const rev = (o: ApiObject): number => Number(o.metadata.resourceVersion);
  const created = rev(await registry.create(pod('p')));
  const bound = rev((await registry.guaranteedUpdate('default', 'p', (cur) => ({ ...cur, spec: { ...(cur.spec as object), nodeName: 'node-a' } }))).object);
  const running = (await registry.guaranteedUpdate('default', 'p', (cur) => ({ ...cur, status: { phase: 'Running' } }))).object;
  const status = rev(running);
  const other = rev(await registry.create(pod('q', 'node-b')));
  const deleted = rev(await registry.remove(running));
  await pollUntil('the delete to reach the unindexed subscriber', () => seen.get('all')!.length === 5, { timeoutMs: 10_000, intervalMs: 10 });

  const want = {
    'node-a': [`update p@${bound}`, `update p@${status}`, `delete p@${deleted}`],
    'node-b': [`create q@${other}`],
    // The binding leaves the unbound value: handed to its watchers too (they send DELETED).
    unbound: [`create p@${created}`, `update p@${bound}`],
    all: [`create p@${created}`, `update p@${bound}`, `update p@${status}`, `create q@${other}`, `delete p@${deleted}`],
    closed: [],
  };
  assert.deepEqual(Object.fromEntries(seen), want);
  assert.equal(cache.subscriberCount, 4);

  // Replay from the buffer follows the same index.
  seen.clear();
  await subscribe('node-a', start, 'node-a');
  await subscribe('unbound', start, '');
  assert.deepEqual(Object.fromEntries(seen), { 'node-a': want['node-a'], unbound: want.unbound });
});

test('an update is filed by its previous node without decoding the previous object, when the cache saw that object', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', 'pods')!, store);
  const decode = registry.decode.bind(registry);
  const decoded: string[] = [];
  registry.decode = (kv, rv) => (decoded.push(`${kv.modRevision}`), decode(kv, rv));
  const cache = new WatchCache({ store, registry, logger: noopLogger });
  t.after(() => cache.close());
  const start = await store.currentRevision();
  const got = new Map<string, string[]>([['node-a', []], ['', []], ['node-b', []]]);
  for (const [value, list] of got) {
    const sub = await cache.subscribe(start, { onEvent: (e: CacheEvent) => void list.push(`${e.kind}@${e.revision}`), onEnd: () => undefined }, value);
    assert.ok(sub);
    t.after(() => sub.close());
  }
  const rev = (o: ApiObject): number => Number(o.metadata.resourceVersion);
  const created = rev(await registry.create(pod('p')));
  const bound = rev((await registry.guaranteedUpdate('default', 'p', (cur) => ({ ...cur, spec: { ...(cur.spec as object), nodeName: 'node-a' } }))).object);
  const running = (await registry.guaranteedUpdate('default', 'p', (cur) => ({ ...cur, status: { phase: 'Running' } }))).object;
  const moved = rev((await registry.guaranteedUpdate('default', 'p', (cur) => ({ ...cur, spec: { ...(cur.spec as object), nodeName: 'node-b' } }))).object);
  await pollUntil('the last update to reach node-b', () => got.get('node-b')!.length === 1, { timeoutMs: 10_000, intervalMs: 10 });
  assert.deepEqual(Object.fromEntries(got), {
    'node-a': [`update@${bound}`, `update@${rev(running)}`, `update@${moved}`],
    '': [`create@${created}`, `update@${bound}`],
    'node-b': [`update@${moved}`],
  });
  // Only guaranteedUpdate's three reads of the stored pod (each at the revision before its write).
  assert.deepEqual(decoded, [String(created), String(bound), String(rev(running))]);
  // A subscriber replaying from the buffer is filed the same way, still without decoding.
  const replay: string[] = [];
  const sub = await cache.subscribe(start, { onEvent: (e: CacheEvent) => void replay.push(`${e.kind}@${e.revision}`), onEnd: () => undefined }, 'node-a');
  t.after(() => sub?.close());
  assert.deepEqual(replay, got.get('node-a'));
  assert.equal(decoded.length, 3);
});

/**
 * Reads newline-delimited watch events until `until` holds or the stream ends (its fetch has a
 * deadline, so a missing event fails the comparison instead of hanging); returns "TYPE name"s.
 */
async function readEvents(body: ReadableStream<Uint8Array>, until: (events: string[]) => boolean): Promise<string[]> {
  const reader = body.getReader();
  const events: string[] = [];
  let text = '';
  while (!until(events)) {
    const next = await reader.read().catch((err: unknown) => ({ done: true as const, value: undefined, err }));
    if (next.done) break;
    const value = next.value;
    text += Buffer.from(value).toString();
    let nl: number;
    while ((nl = text.indexOf('\n')) >= 0) {
      const e = JSON.parse(text.slice(0, nl)) as { type: string; object: ApiObject };
      text = text.slice(nl + 1);
      events.push(`${e.type} ${e.object.metadata.name}`);
    }
  }
  await reader.cancel().catch(() => undefined); // already errored when the deadline ended it
  return events;
}

/**
 * Pod p's whole life through the API (created, bound to node-a, Running, deleted), then one last
 * pod per node value (end-b on node-b, end-unbound, end-a on node-a), each created through `edit`:
 * each watcher reads until the last one it can match.
 */
async function podLifeAndEnds(srv: Awaited<ReturnType<typeof startTestApiServer>>, edit: (p: ApiObject) => ApiObject = (p) => p): Promise<void> {
  assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods', edit(pod('p')))).status, 201);
  const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: 'node-a' } };
  assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods/p/binding', binding)).status, 201);
  const patch = await srv.call('PATCH', '/api/v1/namespaces/default/pods/p/status', { status: { phase: 'Running' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(patch.status, 200);
  assert.equal((await srv.call('DELETE', '/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0')).status, 200);
  for (const [name, node] of [['end-b', 'node-b'], ['end-unbound', undefined], ['end-a', 'node-a']] as const) {
    assert.equal((await srv.call('POST', '/api/v1/namespaces/default/pods', edit(pod(name, node)))).status, 201);
  }
}

test('over HTTP, node watchers, the unbound watcher and other selectors see what they saw without the index', async (t) => {
  const srv = await startTestApiServer();
  t.after(() => srv.close());
  const ac = new AbortController();
  t.after(() => ac.abort());
  const cache = srv.server.context.resource('', 'v1', 'pods')!.cache;
  const others = cache.subscriberCount; // the server's own pod mirror
  const list = await srv.call('GET', '/api/v1/pods');
  const rv = list.json.metadata.resourceVersion as string;
  const selectors = {
    'node-a': 'fieldSelector=spec.nodeName%3Dnode-a',
    'node-b': 'fieldSelector=spec.nodeName%3D%3Dnode-b',
    unbound: 'fieldSelector=spec.nodeName%3D',
    'not node-a': 'fieldSelector=spec.nodeName!%3Dnode-a',
    'node-a and Running': 'fieldSelector=spec.nodeName%3Dnode-a,status.phase%3DRunning',
    'label app=x': 'labelSelector=app%3Dx',
    all: '',
  };
  const streams = await Promise.all(
    Object.values(selectors).map((sel) => fetch(`${srv.url}/api/v1/pods?watch=true&resourceVersion=${rv}&${sel}`, { headers: { Authorization: `Bearer ${srv.token}` }, signal: AbortSignal.any([ac.signal, AbortSignal.timeout(20_000)]) })),
  );
  await pollUntil('every watcher to subscribe', () => cache.subscriberCount >= others + streams.length, { timeoutMs: 10_000 });
  const labelled = (p: ApiObject): ApiObject => ({ ...p, metadata: { ...p.metadata, labels: { app: 'x' } } });
  await podLifeAndEnds(srv, labelled);
  const ends: Record<keyof typeof selectors, string> = {
    'node-a': 'ADDED end-a',
    'node-b': 'ADDED end-b',
    unbound: 'ADDED end-unbound',
    'not node-a': 'ADDED end-unbound',
    'node-a and Running': 'DELETED p',
    'label app=x': 'ADDED end-a',
    all: 'ADDED end-a',
  };
  const got = await Promise.all(streams.map((r, i) => readEvents(r.body!, (ev) => ev.includes(Object.values(ends)[i]!))));
  assert.deepEqual(Object.fromEntries(Object.keys(selectors).map((k, i) => [k, got[i]])), {
    'node-a': ['ADDED p', 'MODIFIED p', 'DELETED p', 'ADDED end-a'],
    'node-b': ['ADDED end-b'],
    unbound: ['ADDED p', 'DELETED p', 'ADDED end-unbound'],
    'not node-a': ['ADDED p', 'DELETED p', 'ADDED end-b', 'ADDED end-unbound'],
    'node-a and Running': ['ADDED p', 'DELETED p'],
    'label app=x': ['ADDED p', 'MODIFIED p', 'MODIFIED p', 'DELETED p', 'ADDED end-b', 'ADDED end-unbound', 'ADDED end-a'],
    all: ['ADDED p', 'MODIFIED p', 'MODIFIED p', 'DELETED p', 'ADDED end-b', 'ADDED end-unbound', 'ADDED end-a'],
  });
});

test('over HTTP, a watch whose only selector is spec.nodeName judges previous objects without decoding them', async (t) => {
  const srv = await startTestApiServer();
  t.after(() => srv.close());
  const ac = new AbortController();
  t.after(() => ac.abort());
  const pods = srv.server.context.resource('', 'v1', 'pods')!;
  // Decodes of an event's previous object (the getter on the cache's events) are what this counts.
  let prevDecodes = 0;
  const decode = pods.registry.decode.bind(pods.registry);
  pods.registry.decode = (...a) => {
    if (/get prev/.test(new Error().stack ?? '')) prevDecodes++;
    return decode(...a);
  };
  const others = pods.cache.subscriberCount;
  const rv = (await srv.call('GET', '/api/v1/pods')).json.metadata.resourceVersion as string;
  const selectors = { 'node-a': 'spec.nodeName%3Dnode-a', 'node-b': 'spec.nodeName%3D%3Dnode-b', unbound: 'spec.nodeName%3D' };
  const streams = await Promise.all(
    Object.values(selectors).map((sel) => fetch(`${srv.url}/api/v1/pods?watch=true&resourceVersion=${rv}&fieldSelector=${sel}`, { headers: { Authorization: `Bearer ${srv.token}` }, signal: AbortSignal.any([ac.signal, AbortSignal.timeout(20_000)]) })),
  );
  await pollUntil('every watcher to subscribe', () => pods.cache.subscriberCount >= others + streams.length, { timeoutMs: 10_000 });
  await podLifeAndEnds(srv);
  const ends = ['ADDED end-a', 'ADDED end-b', 'ADDED end-unbound'];
  const got = await Promise.all(streams.map((r, i) => readEvents(r.body!, (ev) => ev.includes(ends[i]!))));
  assert.deepEqual(Object.fromEntries(Object.keys(selectors).map((k, i) => [k, got[i]])), {
    'node-a': ['ADDED p', 'MODIFIED p', 'DELETED p', 'ADDED end-a'],
    'node-b': ['ADDED end-b'],
    unbound: ['ADDED p', 'DELETED p', 'ADDED end-unbound'],
  });
  // Only the binding's DELETED to the unbound watcher, which carries the previous object (as the
  // cacher sends the object that left the selector); the status update and the delete need none.
  assert.equal(prevDecodes, 1);
});
