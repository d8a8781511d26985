import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigFile, resolveConfig } from './config.js';
import { configz, goDuration } from './configz.js';

test('goDuration writes Go Duration.String() forms', () => {
  assert.deepEqual([0, 500, 10_000, 120_000, 90_500, 3_600_000, 5_400_000].map(goDuration), ['0s', '500ms', '10s', '2m0s', '1m30.5s', '1h0m0s', '1h30m0s']);
});

test('/configz: {"kubeletconfig": …} with kubelet field names, defaults and file values', () => {
  const c = resolveConfig(parseConfigFile('{ maxPods: 50, podPidsLimit: 1024, systemReserved: { cpu: 100m, memory: 256Mi, pid: "100" }, providerID: "x://1" }'), { port: 10250 }, 'h');
  const k = configz(c).kubeletconfig;
  assert.equal(k.kind, 'KubeletConfiguration');
  assert.equal(k.apiVersion, 'kubelet.config.k8s.io/v1beta1');
  assert.equal(k.maxPods, 50);
  assert.equal(k.podPidsLimit, 1024);
  assert.equal(k.syncFrequency, '1m0s');
  assert.equal(k.nodeStatusReportFrequency, '5m0s');
  assert.equal(k.nodeStatusMaxImages, 50);
  assert.equal(k.imageMinimumGCAge, '2m0s');
  assert.equal(k.cgroupDriver, 'cgroupfs');
  assert.equal(k.providerID, 'x://1');
  assert.deepEqual(k.systemReserved, { cpu: '100m', memory: '256Mi', pid: '100' });
  assert.equal(k.containerLogMaxSize, '10Mi');
});
