// The stored-object bound (registry.ts, MAX_STORED_OBJECT_BYTES) against a real etcd with its
// default --max-request-bytes: the largest object the API server lets through is one etcd
// stores, and one byte more is the API server's 413, not etcd's error; and a list whose reply
// is larger than gRPC's default 4 MiB message is read whole.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { MAX_STORED_OBJECT_BYTES, Registry } from '../../src/apiserver/registry.js';
import { findResource } from '../../src/apiserver/resources.js';
import { StatusError } from '../../src/apiserver/status.js';
import type { ApiObject } from '../../src/apiserver/object.js';
import { createEtcdStore } from '../../src/storage/index.js';
import { etcdForFile } from '../../src/storage/testing/etcd.js';

const { skip, etcd } = etcdForFile();

describe('stored object size on etcd', { skip }, () => {
  it('the largest object the registry writes is stored by etcd; one byte more is 413 before etcd sees it', async (t) => {
    const store = createEtcdStore({ endpoints: [etcd().endpoint], prefix: `/t-${randomUUID()}` });
    t.after(() => store.close());
    const registry = new Registry(findResource('', 'v1', 'configmaps')!, store);
    const object = (name: string, pad: number): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: 'x'.repeat(pad) } });
    // Pad so that value + key twice + the 1 KiB allowance is exactly the bound.
    const largest = (name: string): number => {
      const key = Buffer.byteLength(registry.key('default', name));
      return MAX_STORED_OBJECT_BYTES - 1024 - 2 * key - registry.encode(object(name, 0)).length;
    };
    const stored = await registry.create(object('largest', largest('largest')));
    assert.equal((await registry.get('default', 'largest')).metadata.resourceVersion, stored.metadata.resourceVersion);
    await assert.rejects(registry.create(object('larger', largest('larger') + 1)), (e: unknown) => e instanceof StatusError && e.code === 413 && e.message === 'etcdserver: request is too large');
    // An update that grows an object past the bound is refused the same way, and leaves it as it was.
    await assert.rejects(
      registry.guaranteedUpdate('default', 'largest', (cur) => ({ ...cur, data: { a: 'x'.repeat(largest('largest') + 1) } })),
      (e: unknown) => e instanceof StatusError && e.code === 413,
    );
    assert.equal((await registry.get('default', 'largest')).metadata.resourceVersion, stored.metadata.resourceVersion);
  });

  it('a list whose reply passes gRPC\'s default 4 MiB is served, and the store stays reachable', async (t) => {
    const store = createEtcdStore({ endpoints: [etcd().endpoint], prefix: `/t-${randomUUID()}` });
    t.after(() => store.close());
    // Six values of 1 MiB: each within etcd's --max-request-bytes (1.5 MiB), 6 MiB together.
    const value = Buffer.alloc(1024 * 1024, 'x');
    for (let i = 0; i < 6; i++) await store.create(`/big/v${i}`, value);
    for (let round = 0; round < 3; round++) {
      const listed = await store.list('/big/');
      assert.equal(listed.items.length, 6);
      assert.equal(listed.items.reduce((n, kv) => n + kv.value.length, 0), 6 * 1024 * 1024);
    }
    assert.ok(await store.get('/big/v0'), 'the store still answers after three large lists');
  });
});
