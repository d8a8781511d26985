import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { readyReason } from './node-status.js';
import { runtimeHealth } from './runtime-health.js';

test('runtime health: CRI Status conditions, CNI and PLEG state; an unreachable runtime reads as down with the error', async (t) => {
  const fake = await FakeCriServer.start();
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(async () => {
    cri.close();
    await fake.close();
  });
  let cni = false;
  const check = runtimeHealth({ runtime: cri.runtime, runtimeName: 'containerd', runtimeVersion: '1.6.20', cniReady: () => cni, plegHealthy: () => true });
  const signal = AbortSignal.timeout(10_000);

  let h = await check(signal);
  assert.deepEqual([h.runtimeReady, h.networkReady, h.cniReady, h.plegHealthy], [true, true, false, true]);
  assert.match(readyReason(h)!, /network plugin not ready: pod CIDR not yet known/);

  cni = true;
  fake.runtime.conditions.set('NetworkReady', { status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' });
  h = await check(signal);
  assert.equal(h.networkMessage, 'reason:NetworkPluginNotReady message:cni config uninitialized');
  assert.match(readyReason(h)!, /container runtime network not ready/);

  // Enough failures to outlast the client's retries of a read.
  fake.runtime.injectError('Status', 'UNAVAILABLE', 'runtime gone', 10);
  h = await check(signal);
  assert.equal(h.runtimeReady, false);
  assert.match(h.runtimeMessage!, /runtime gone/);
  assert.equal(h.runtimeName, 'containerd');
});
