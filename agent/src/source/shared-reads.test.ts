import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbortError } from '@nodelet/base';
import { SharedReads } from './shared-reads.js';

test('overlapping reads of one key share one GET; a caller that leaves does not end it for the others; the next read after it settled is a new GET', async () => {
  const shared = new SharedReads();
  let gets = 0;
  let answer!: (v: string) => void;
  const read = () => {
    gets++;
    return new Promise<string>((r) => (answer = r));
  };
  const leaving = new AbortController();
  const a = shared.read('configmap/default/kube-root-ca.crt', read, AbortSignal.timeout(5000));
  const b = shared.read('configmap/default/kube-root-ca.crt', read, leaving.signal);
  const other = shared.read('configmap/default/other', async () => 'x', AbortSignal.timeout(5000));
  assert.equal(gets, 1, 'one GET for the two overlapping reads of one key');
  leaving.abort();
  await assert.rejects(b, (e: unknown) => isAbortError(e));
  answer('CA');
  assert.equal(await a, 'CA');
  assert.equal(await other, 'x');
  assert.equal(shared.size, 0, 'nothing kept once settled');
  const c = shared.read('configmap/default/kube-root-ca.crt', read, AbortSignal.timeout(5000));
  assert.equal(gets, 2);
  answer('CA2');
  assert.equal(await c, 'CA2');
});

test('a failed shared GET fails every caller that shared it, and the next read tries again', async () => {
  const shared = new SharedReads();
  let gets = 0;
  const failing = async (): Promise<string> => {
    gets++;
    throw new Error('api away');
  };
  const [x, y] = await Promise.allSettled([shared.read('k', failing, AbortSignal.timeout(5000)), shared.read('k', failing, AbortSignal.timeout(5000))]);
  assert.equal(x.status, 'rejected');
  assert.equal(y.status, 'rejected');
  assert.equal(gets, 1);
  assert.equal(await shared.read('k', async () => 'back', AbortSignal.timeout(5000)), 'back');
});
