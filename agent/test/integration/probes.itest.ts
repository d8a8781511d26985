import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PODS, type Pod } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';
import { pollUntil } from '@nodelet/base';

const cond = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
const ctr = (p: Pod, name: string) => p.status?.containerStatuses?.find((c) => c.name === name);

async function exec(h: Harness, containerId: string, cmd: string[]): Promise<void> {
  const r = await h.agent.cri.runtime.execSync({ containerId, cmd, timeout: 10 });
  assert.equal(r.exitCode, 0, `exec ${cmd.join(' ')}: ${r.stderr.toString()}`);
}

test('readiness probes (exec, httpGet to the pod IP) gate Ready; a failing liveness probe restarts the container', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('probes', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '2s' } }, 9);
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  const loop = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'];
  await h.api.create(PODS, podSpec(h, 'ready', {
    containers: [
      { name: 'main', image: img, imagePullPolicy: 'IfNotPresent', command: loop, readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 } },
      {
        name: 'web', image: img, imagePullPolicy: 'IfNotPresent', command: ['httpd', '-f', '-p', '8080', '-h', '/etc'],
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/passwd', port: 'http', httpHeaders: [{ name: 'X-Probe', value: 'nodelet' }] }, periodSeconds: 1 },
      },
    ],
  }));
  await h.api.create(PODS, podSpec(h, 'live', {
    containers: [{ name: 'app', image: img, imagePullPolicy: 'IfNotPresent', command: loop, livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 } }],
  }));

  // Running, the httpGet container ready, but the pod not Ready while /tmp/ready is missing.
  const running = await pollUntil('pod "ready" Running with web ready and main not ready', async () => {
    const p = await getPod(h, 'ready');
    return p.status?.phase === 'Running' && ctr(p, 'main')?.state?.running && ctr(p, 'web')?.ready === true ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(ctr(running, 'main')!.ready, false);
  assert.equal(cond(running, 'Ready'), 'False');
  assert.equal(cond(running, 'ContainersReady'), 'False');
  assert.match(running.status!.conditions!.find((c) => c.type === 'Ready')!.message ?? '', /containers with unready status: \[main\]/);
  // main's exec probe and web's httpGet probe run on their own timers: web may be ready before
  // main's first failure has been recorded (CI saw it under load), so the event is awaited.
  await pollUntil('Unhealthy event for the readiness probe', () => h.agent.events.recent.some((e) => e.pod === 'default/ready' && e.reason === 'Unhealthy' && e.message.startsWith('Readiness probe failed')), { timeoutMs: 10_000, intervalMs: 100 });

  await exec(h, ctr(running, 'main')!.containerID!.replace('containerd://', ''), ['touch', '/tmp/ready']);
  const ready = await pollUntil('pod "ready" Ready after touch /tmp/ready', async () => {
    const p = await getPod(h, 'ready');
    return cond(p, 'Ready') === 'True' ? p : undefined;
  }, { timeoutMs: 20_000 });
  assert.equal(cond(ready, 'ContainersReady'), 'True');
  assert.ok(ready.status!.containerStatuses!.every((c) => c.ready && c.restartCount === 0));

  // Liveness: `false` fails the first probe (failureThreshold 1) → Unhealthy, Killing, restart.
  const restarted = await pollUntil('pod "live" container restarted by its liveness probe', async () => {
    const p = await getPod(h, 'live');
    return (ctr(p, 'app')?.restartCount ?? 0) >= 1 ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(restarted.status!.phase, 'Running');
  const events = h.agent.events.recent.filter((e) => e.pod === 'default/live');
  assert.ok(events.some((e) => e.reason === 'Unhealthy' && e.type === 'Warning' && e.message.startsWith('Liveness probe failed')), `Unhealthy event in ${JSON.stringify(events)}`);
  assert.ok(events.some((e) => e.reason === 'Killing' && e.message === 'Container app failed liveness probe, will be restarted'), `Killing event in ${JSON.stringify(events)}`);
});
