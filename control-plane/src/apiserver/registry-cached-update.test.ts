// Registry.guaranteedUpdate starts from a cached copy when it has one (upstream's cacher passes its
// object to the store's GuaranteedUpdate): no store read when the copy is current, and a stale copy
// never decides the outcome — the write's guard, the precondition, `mutate` refusing or finding
// nothing to change all send it back to the store.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { ApiObject } from './object.js';
import { Registry } from './registry.js';
import { findResource } from './resources.js';

async function setup(t: TestContext) {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const registry = new Registry(findResource('', 'v1', 'pods')!, store);
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (...a) => (reads++, get(...a));
  const first = await registry.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1', labels: { n: '0' } }, spec: { containers: [] } });
  let cached: ApiObject | undefined = structuredClone(first);
  registry.readCachedFrom((ns, name) => (ns === 'default' && name === 'p' && cached ? structuredClone(cached) : undefined));
  /** Moves the stored object on without the cache seeing it. */
  const bumpBehindCache = async (label: string) => {
    const keep = cached;
    cached = undefined;
    await registry.guaranteedUpdate('default', 'p', (o) => ({ ...o, metadata: { ...o.metadata, labels: { n: label } } }));
    cached = keep;
  };
  return { registry, reads: () => reads, setCached: (o: ApiObject | undefined) => void (cached = o), bumpBehindCache, first };
}

const label = (v: string) => (o: ApiObject): ApiObject => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, n: v } } });

test('a current cached copy: the update reads nothing from the store', async (t) => {
  const { registry, reads } = await setup(t);
  const before = reads();
  const r = await registry.guaranteedUpdate('default', 'p', label('1'));
  assert.equal(r.changed, true);
  assert.equal(r.object.metadata.labels!.n, '1');
  assert.equal(reads() - before, 0, 'no store read');
});

test('a stale cached copy: the guard fails, the store is read, the update applies to the current object', async (t) => {
  const { registry, bumpBehindCache } = await setup(t);
  await bumpBehindCache('stored');
  const seen: string[] = [];
  const r = await registry.guaranteedUpdate('default', 'p', (o) => {
    seen.push(o.metadata.labels!.n!);
    return { ...o, metadata: { ...o.metadata, annotations: { a: 'b' } } };
  });
  assert.deepEqual(seen, ['0', 'stored']);
  assert.equal(r.object.metadata.labels!.n, 'stored', 'the change is made on the stored object, not the stale copy');
  assert.deepEqual(r.object.metadata.annotations, { a: 'b' });
});

test('a stale cached copy is not a precondition failure, a refusal or "no change"', async (t) => {
  const { registry, bumpBehindCache } = await setup(t);
  await bumpBehindCache('stored');
  const current = await registry.get('default', 'p');
  // The caller's precondition is the stored resourceVersion: the stale copy's differs.
  const pre = await registry.guaranteedUpdate('default', 'p', label('x'), { preconditionRV: current.metadata.resourceVersion! });
  assert.equal(pre.object.metadata.labels!.n, 'x');
  await bumpBehindCache('y');
  // `mutate` refusing what it sees in the stale copy is asked again with the stored object.
  const refused = await registry.guaranteedUpdate('default', 'p', (o) => {
    if (o.metadata.labels!.n !== 'y') throw new Error('stale');
    return label('z')(o);
  });
  assert.equal(refused.object.metadata.labels!.n, 'z');
  // The stale copy already has the wanted value; the stored object does not: it is written.
  await bumpBehindCache('w');
  const noop = await registry.guaranteedUpdate('default', 'p', (o) => (o.metadata.labels!.n === '0' ? undefined : label('0')(o)));
  assert.equal(noop.changed, true);
  assert.equal((await registry.get('default', 'p')).metadata.labels!.n, '0');
});

test('a cached copy of a deleted object: 404 from the store', async (t) => {
  const { registry, first } = await setup(t);
  await registry.remove(first);
  await assert.rejects(registry.guaranteedUpdate('default', 'p', label('1')), (err: { code?: number }) => err.code === 404);
});
