import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient, Pod } from '@nodelet/api';
import { FakeClock } from '@nodelet/base/testing';
import { TokenManager } from './token-manager.js';

test('projected tokens: one TokenRequest bound to the pod, reused until 80 % of the lifetime, then renewed', async () => {
  const clock = new FakeClock();
  const requests: Array<{ name?: string; body: { spec: Record<string, unknown> } }> = [];
  const api = {
    create: async (_r: unknown, body: { spec: Record<string, unknown> }, o: { name?: string }) => {
      requests.push({ name: o.name, body });
      return { status: { token: `t${requests.length}`, expirationTimestamp: new Date(clock.now() + 3607_000).toISOString() } };
    },
  } as unknown as ApiClient;
  const tm = new TokenManager({ api, clock });
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { serviceAccountName: 'builder', containers: [] } } as Pod;
  const signal = new AbortController().signal;
  assert.equal(await tm.podToken(pod, { expirationSeconds: 3607 }, signal), 't1');
  assert.equal(requests[0]!.name, 'builder');
  assert.deepEqual(requests[0]!.body.spec.boundObjectRef, { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1' });
  clock.advance(0.79 * 3607_000);
  assert.equal(await tm.podToken(pod, { expirationSeconds: 3607 }, signal), 't1', 'still fresh');
  clock.advance(0.02 * 3607_000);
  assert.equal(await tm.podToken(pod, { expirationSeconds: 3607 }, signal), 't2', 'renewed past 80 %');
  tm.forget('u1');
  assert.equal(await tm.podToken(pod, { expirationSeconds: 3607 }, signal), 't3', 'a forgotten pod asks again');
});
