import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InflightLimiter, isLongRunning } from './limits.js';

const u = (path: string): URL => new URL(`https://x${path}`);

test('isLongRunning: watches, proxies and log/exec/attach/portforward, as kube-apiserver', () => {
  const yes: Array<[string, string]> = [
    ['GET', '/api/v1/pods?watch=true'],
    ['GET', '/api/v1/namespaces/default/pods?watch=1'],
    ['GET', '/apis/apps/v1/namespaces/default/deployments?watch=true&resourceVersion=5'],
    ['GET', '/api/v1/watch/pods'],
    ['GET', '/api/v1/namespaces/default/pods/p/log?follow=true'],
    ['GET', '/api/v1/namespaces/default/pods/p/log'],
    ['GET', '/api/v1/namespaces/default/pods/p/exec?command=sh'],
    ['POST', '/api/v1/namespaces/default/pods/p/attach'],
    ['GET', '/api/v1/namespaces/default/pods/p/portforward'],
    ['GET', '/api/v1/nodes/n1/proxy'],
  ];
  const no: Array<[string, string]> = [
    ['GET', '/api/v1/pods'],
    ['GET', '/api/v1/namespaces/default/pods/p?watch=true'],
    ['POST', '/api/v1/namespaces/default/pods?watch=true'],
    ['GET', '/api/v1/namespaces/default/pods/p/status'],
    ['GET', '/healthz?watch=true'],
    ['GET', '/version'],
    ['GET', '/api/v1/namespaces/%zz'],
  ];
  for (const [m, p] of yes) assert.equal(isLongRunning(m, u(p)), true, `${m} ${p}`);
  for (const [m, p] of no) assert.equal(isLongRunning(m, u(p)), false, `${m} ${p}`);
});

test('InflightLimiter: two pools, 429 when full, system:masters never refused, release is idempotent', () => {
  const l = new InflightLimiter({ maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 });
  const alice = { name: 'alice', groups: ['system:authenticated'] };
  const admin = { name: 'admin', groups: ['system:masters'] };
  const r1 = l.acquire('GET', alice);
  l.acquire('HEAD', alice);
  assert.throws(() => l.acquire('GET', alice), (err: { code?: number; reason?: string; details?: { retryAfterSeconds?: number } }) => err.code === 429 && err.reason === 'TooManyRequests' && err.details?.retryAfterSeconds === 1);
  const w = l.acquire('POST', alice);
  assert.throws(() => l.acquire('DELETE', alice), /Too many requests/);
  l.acquire('PATCH', admin)();
  assert.deepEqual(l.inUse(), { readOnly: 2, mutating: 1 });
  r1();
  r1();
  w();
  assert.deepEqual(l.inUse(), { readOnly: 1, mutating: 0 });
  l.acquire('GET', alice);
  const unlimited = new InflightLimiter({ maxRequestsInflight: 0, maxMutatingRequestsInflight: 0 });
  for (let i = 0; i < 1000; i++) unlimited.acquire('POST', alice);
});
