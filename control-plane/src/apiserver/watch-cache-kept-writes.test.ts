// The watch cache hands out the object its own registry just wrote instead of parsing the stored
// bytes again (Registry.keepWrites / takeWritten): the event's object is what decoding the stored
// value gives, key order and resourceVersion included, is the cache's own copy (the writer's later
// changes to its object do not reach it), and anything the registry did not write byte for byte is
// decoded as before.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { ApiObject } from './object.js';
import { Registry } from './registry.js';
import { findResource } from './resources.js';
import { WatchCache, type CacheEvent } from './watch-cache.js';

async function setup(t: TestContext, plural = 'pods') {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', plural)!, store);
  let decodes = 0;
  const decode = registry.decode.bind(registry);
  registry.decode = (...a) => (decodes++, decode(...a));
  const cache = new WatchCache({ store, registry, logger: noopLogger });
  t.after(() => cache.close());
  const events: CacheEvent[] = [];
  const sub = await cache.subscribe(await store.currentRevision(), { onEvent: (e) => void events.push(e), onEnd: () => undefined });
  assert.ok(sub);
  t.after(() => sub.close());
  const eventAt = async (rv: string): Promise<CacheEvent> => {
    await pollUntil(`the event at ${rv}`, () => events.some((e) => e.revision === Number(rv)), { timeoutMs: 5000 });
    return events.find((e) => e.revision === Number(rv))!;
  };
  /** What decoding the stored value at the event's key gives now. */
  const stored = async (ns: string, name: string): Promise<ApiObject> => decode((await store.get(registry.key(ns, name)))!);
  return { store, registry, eventAt, stored, decodes: () => decodes };
}

const pod = (name: string): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { b: '2', a: '1' }, annotations: { '10': 'x', z: 'y' } },
  spec: { containers: [{ name: 'c', image: 'x:1', args: ['a', 1.5, true, null] as unknown as string[] }], nodeName: '' },
  status: { phase: 'Pending' },
});

test('a create and an update the registry wrote reach the cache undecoded, equal to the stored value decoded', async (t) => {
  const s = await setup(t);
  const created = await s.registry.create(pod('p1'));
  const ev = await s.eventAt(created.metadata.resourceVersion!);
  // The writer changes its own object after the write (as a handler may): the cache's copy is its own.
  (created.metadata.labels as Record<string, string>).a = 'changed';
  (created.spec as { containers: unknown[] }).containers.push({ name: 'later' });
  const decoded = await s.stored('default', 'p1');
  assert.equal(JSON.stringify(ev.object), JSON.stringify(decoded), 'same text: same values, key order and resourceVersion');
  assert.deepStrictEqual(ev.object, decoded);
  assert.equal(ev.object.metadata.resourceVersion, created.metadata.resourceVersion);

  const updated = await s.registry.guaranteedUpdate('default', 'p1', (cur) => ({ ...cur, status: { phase: 'Running' } }));
  const uev = await s.eventAt(updated.object.metadata.resourceVersion!);
  assert.deepStrictEqual(uev.object, await s.stored('default', 'p1'));
  assert.equal(JSON.stringify(uev.object), JSON.stringify(await s.stored('default', 'p1')));
  assert.equal(s.decodes(), 1, 'only guaranteedUpdate’s read of the current object was decoded');
  assert.equal((uev.prev?.status as { phase: string }).phase, 'Pending', 'the previous object is decoded when read');
  assert.equal(s.decodes(), 2);
});

test('writes the registry did not make, or that JSON text cannot carry exactly, are decoded', async (t) => {
  const s = await setup(t);
  // An undefined field: the stored text leaves it out, so the event must not carry the key.
  const withUndefined = { ...pod('p2'), extra: undefined };
  const a = await s.registry.create(withUndefined);
  const aev = await s.eventAt(a.metadata.resourceVersion!);
  assert.equal('extra' in aev.object, false);
  assert.deepStrictEqual(aev.object, await s.stored('default', 'p2'));
  // Another writer of the same key after the registry's own write: the bytes differ, so the event is decoded.
  const other = new Registry(s.registry.def, s.store);
  const mine = await s.registry.create(pod('p3'));
  const theirs = await other.guaranteedUpdate('default', 'p3', (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { by: 'other' } } }));
  const tev = await s.eventAt(theirs.object.metadata.resourceVersion!);
  assert.deepEqual(tev.object.metadata.labels, { by: 'other' });
  assert.deepStrictEqual(tev.object, await s.stored('default', 'p3'));
  assert.equal((await s.eventAt(mine.metadata.resourceVersion!)).object.metadata.labels?.a, '1');
  const before = s.decodes();
  // A create that fails (the name exists) keeps nothing: the next write's event is its own.
  await assert.rejects(s.registry.create(pod('p3')), { code: 409 });
  const later = await s.registry.guaranteedUpdate('default', 'p3', (cur) => ({ ...cur, status: { phase: 'Failed' } }));
  const lev = await s.eventAt(later.object.metadata.resourceVersion!);
  assert.equal((lev.object.status as { phase: string }).phase, 'Failed');
  assert.deepStrictEqual(lev.object, await s.stored('default', 'p3'));
  assert.equal(s.decodes(), before + 1, 'the update read the current object; its event was not decoded');
});
