import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@nodelet/base/testing';
import { noopLogger } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import type { ObservedPod } from '../kubecontainer/observed.js';
import { ProbeManager } from './prober.js';
import { ProbeMetrics } from './metrics.js';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

test('prober_probe_total counts every probe run by type and result, and goes with the pod', async () => {
  const clock = new FakeClock();
  const metrics = new ProbeMetrics();
  let exitCode = 1;
  const prober = new ProbeManager({
    exec: {
      execSync: async () => ({ exitCode, output: '' }),
    },
    events: { event: () => undefined },
    clock,
    log: noopLogger,
    onResultChanged: () => undefined,
    metrics,
  });
  const pod: Pod = { metadata: { uid: 'u1', name: 'web', namespace: 'ns' }, spec: { containers: [{ name: 'app', image: 'i', readinessProbe: { exec: { command: ['true'] } } }] } };
  const observed: ObservedPod = {
    uid: 'u1', name: 'web', namespace: 'ns',
    sandboxes: [{ id: 'sb', attempt: 0, ready: true, createdAt: 0, ips: ['10.0.0.2'], name: 'web', namespace: 'ns', uid: 'u1' }],
    containers: [{ id: 'c1', sandboxId: 'sb', name: 'app', type: 'regular', state: 'running', hash: '', restartCount: 0, createdAt: 0, startedAt: 0, image: 'i', imageRef: 'i' }],
  };
  prober.sync(pod, observed);
  clock.advance(0);
  await settle();
  exitCode = 0;
  for (let i = 0; i < 2; i++) {
    clock.advance(10_000);
    await settle();
  }
  const labels = 'container="app",namespace="ns",pod="web",pod_uid="u1",probe_type="Readiness"';
  assert.equal(metrics.render(), [
    '# HELP prober_probe_total [BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.',
    '# TYPE prober_probe_total counter',
    `prober_probe_total{${labels},result="failed"} 1`,
    `prober_probe_total{${labels},result="successful"} 2`,
    '',
  ].join('\n'));
  prober.removePod('u1');
  assert.ok(!metrics.render().includes('prober_probe_total{'), 'series dropped with the pod');
});
