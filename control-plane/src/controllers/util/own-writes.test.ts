import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplicaSet } from '@nodelet/api';
import { OwnWrites } from './own-writes.js';

const rs = (rv: string, replicas = 0): ReplicaSet => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'a', namespace: 'ns', resourceVersion: rv }, status: { replicas } });

test('own writes: the written object until the informer moves past the version it replaced', () => {
  const w = new OwnWrites<ReplicaSet>();
  const v1 = rs('1');
  assert.equal(w.latest('ns/a', v1), v1, 'nothing written: the informer copy');
  w.wrote('ns/a', v1, rs('2', 1));
  assert.equal(w.latest('ns/a', v1)?.metadata.resourceVersion, '2', 'informer still at 1: our write');
  // A second write before the informer caught up was made over the informer's 1 as well.
  w.wrote('ns/a', v1, rs('3', 2));
  assert.equal(w.latest('ns/a', v1)?.status?.replicas, 2);
  // The informer shows another version (ours or anyone's): it wins and the write is forgotten.
  const v3 = rs('3', 2);
  assert.equal(w.latest('ns/a', v3), v3);
  assert.equal(w.latest('ns/a', v1), v1, 'forgotten: even the old copy is returned as is');
  w.wrote('ns/a', v1, rs('4'));
  assert.equal(w.latest('ns/a', undefined), undefined, 'deleted');
  assert.equal(w.latest('ns/a', v1), v1, 'and forgotten');
});
