// The pod create path against the store (docs/performance.md "API server write path"): what a
// create reads in admission comes from the server's mirrors, so a create is one store write and
// no store read, with LimitRanges, ResourceQuotas and PriorityClasses in the cluster.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

/** `inner` with a count of every call by method name. */
function countingStore(inner: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe('pod create path', () => {
  const inner = createTempSqliteStore();
  const { store, calls } = countingStore(inner);
  let t: TestApiServer;
  before(async () => {
    t = await startTestApiServer({ store });
    for (const [path, body] of [
      ['/api/v1/namespaces', { metadata: { name: 'app' } }],
      ['/api/v1/namespaces/app/serviceaccounts', { metadata: { name: 'default' } }],
      ['/api/v1/namespaces/app/limitranges', { metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '100m' } }] } }],
      ['/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'batch' }, value: 100, globalDefault: true }],
    ] as const) {
      assert.equal((await t.call('POST', path, body)).status, 201, path);
    }
  });
  after(async () => {
    await t?.close();
    await inner.close();
  });

  it('reads nothing from the store and writes the pod once; the admission reads are in force', async () => {
    calls.clear();
    const r = await t.call('POST', '/api/v1/namespaces/app/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.json.spec.containers[0].resources, { requests: { cpu: '100m' } }, 'the LimitRange default applies');
    assert.equal(r.json.spec.priority, 100, 'the default PriorityClass applies');
    const reads = ['get', 'list', 'count'].map((m) => calls.get(m) ?? 0);
    assert.deepEqual(reads, [0, 0, 0], `store reads (get, list, count) during the create: ${JSON.stringify([...calls])}`);
    assert.equal(calls.get('create'), 1);
  });

  it('a quota created a moment before is in force for the next create, and a deleted one no longer charges', async () => {
    const q = await t.call('POST', '/api/v1/namespaces/app/resourcequotas', { metadata: { name: 'q' }, spec: { hard: { pods: '5' } } });
    assert.equal(q.status, 201);
    const refused = await t.call('POST', '/api/v1/namespaces/app/pods', { metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.message, 'pods "p2" is forbidden: status unknown for quota: q, resources: pods');
    assert.equal((await t.call('DELETE', '/api/v1/namespaces/app/resourcequotas/q')).status, 200);
    const created = await t.call('POST', '/api/v1/namespaces/app/pods', { metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
  });
});
