/**
 * Native sidecars (init containers with restartPolicy Always) on real containerd with the
 * in-process agent: the sidecar starts first and the next init container waits for its startup
 * probe, it serves the app container through a shared emptyDir while the pod is Running (not
 * Init:0/2), and it is stopped after the app container: when the app completes under
 * restartPolicy Never (the pod Succeeds), and when the pod is deleted. A sidecar that exits beside
 * a running app container is started again.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { PODS, type Container, type Pod } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

let h: Harness | undefined;
let skip = false;

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  // A short CrashLoopBackOff so a sidecar's restart is seen in seconds (kubelet: 10 s, unit-tested).
  h = await startHarness('sidecar', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '2s' } }, 42);
});
after(async () => {
  await h?.stop();
});

/** The sidecar: says it is ready in the shared volume, serves ticks, and logs its own stop. */
function sidecar(logDir: string): Container {
  return {
    name: 'side',
    image: h!.rt.images.busybox,
    imagePullPolicy: 'IfNotPresent',
    restartPolicy: 'Always',
    command: ['sh', '-c', `trap "echo side-stopped >> ${logDir}/order; exit 0" TERM; sleep 1; echo served > /shared/ready; while true; do sleep 0.2; done`],
    startupProbe: { exec: { command: ['test', '-f', '/shared/ready'] }, periodSeconds: 1, failureThreshold: 30 },
    volumeMounts: [{ name: 'shared', mountPath: '/shared' }, { name: 'log', mountPath: logDir }],
  };
}

function sidecarPod(name: string, logHost: string, app: string, restartPolicy: 'Always' | 'Never'): Pod {
  const img = h!.rt.images.busybox;
  return podSpec(h!, name, {
    restartPolicy,
    terminationGracePeriodSeconds: 10,
    volumes: [{ name: 'shared', emptyDir: {} }, { name: 'log', hostPath: { path: logHost } }],
    initContainers: [
      sidecar('/log'),
      // Runs only once the sidecar's startup probe saw its file.
      { name: 'setup', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'test -f /shared/ready && echo setup-saw-sidecar >> /log/order'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }, { name: 'log', mountPath: '/log' }] },
    ],
    containers: [{ name: 'app', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', app], volumeMounts: [{ name: 'shared', mountPath: '/shared' }, { name: 'log', mountPath: '/log' }] }],
  });
}

async function logDir(name: string): Promise<string> {
  const dir = join(h!.dir, `log-${name}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

test('a sidecar serves its app container, the pod is Running (not Init), and it stops after the app completes', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const dir = await logDir('done');
  // The app reads what the sidecar serves, lets the test see the pod Running, then completes.
  await h!.api.create(PODS, sidecarPod('done', dir, 'echo "app-read $(cat /shared/ready)" >> /log/order; sleep 4; echo app-done >> /log/order', 'Never'));
  // Before: the running sidecar never "completed", so setup and app never started (Init:0/2).
  const running = await pollUntil('done Running with its sidecar started', async () => {
    const p = await getPod(h!, 'done');
    const side = p.status?.initContainerStatuses?.find((s) => s.name === 'side');
    return p.status?.phase === 'Running' && side?.started && side.state?.running ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(running.status!.conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
  assert.equal(running.status!.initContainerStatuses!.find((s) => s.name === 'setup')!.state!.terminated!.exitCode, 0);

  const done = await pollUntil('done Succeeded', async () => {
    const p = await getPod(h!, 'done');
    return p.status?.phase === 'Succeeded' ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.deepEqual((await readFile(join(dir, 'order'), 'utf8')).trim().split('\n'), ['setup-saw-sidecar', 'app-read served', 'app-done', 'side-stopped']);
  const side = done.status!.initContainerStatuses!.find((s) => s.name === 'side')!.state!.terminated!;
  const app = done.status!.containerStatuses![0]!.state!.terminated!;
  assert.equal(app.exitCode, 0);
  assert.ok(Date.parse(side.finishedAt!) >= Date.parse(app.finishedAt!), `sidecar finished ${side.finishedAt}, app ${app.finishedAt}`);
  await h!.api.delete(PODS, 'done', { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil('done gone', () => getPod(h!, 'done').then(() => false, () => true), { timeoutMs: 60_000 });
});

test('on deletion the sidecar is stopped only after the app container has stopped', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const dir = await logDir('del');
  // The app takes a second to stop; the sidecar must still be there to serve it meanwhile.
  await h!.api.create(PODS, sidecarPod('del', dir, 'trap "sleep 1; test -f /shared/ready && echo app-stopped >> /log/order; exit 0" TERM; while true; do sleep 0.2; done', 'Always'));
  await pollUntil('del Running with every container ready', async () => {
    const p = await getPod(h!, 'del');
    return p.status?.phase === 'Running' && p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  }, { timeoutMs: 60_000 });
  await h!.api.delete(PODS, 'del', { namespace: 'default' });
  await pollUntil('del gone', () => getPod(h!, 'del').then(() => false, () => true), { timeoutMs: 60_000 });
  assert.deepEqual((await readFile(join(dir, 'order'), 'utf8')).trim().split('\n'), ['setup-saw-sidecar', 'app-stopped', 'side-stopped']);
});

test('a sidecar that exits while its app container runs is started again; the app is not touched', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const img = h!.rt.images.busybox;
  await h!.api.create(PODS, podSpec(h!, 'flaky', {
    restartPolicy: 'Never',
    volumes: [{ name: 'shared', emptyDir: {} }],
    initContainers: [{
      name: 'side', image: img, imagePullPolicy: 'IfNotPresent', restartPolicy: 'Always',
      // The first run exits after a while; the next ones serve.
      command: ['sh', '-c', 'if [ -f /shared/once ]; then trap "exit 0" TERM; while true; do sleep 0.2; done; fi; touch /shared/once; sleep 2; exit 1'],
      volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
    }],
    containers: [{ name: 'app', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] }],
  }));
  const p = await pollUntil('flaky sidecar restarted and running beside the app', async () => {
    const pod = await getPod(h!, 'flaky');
    const side = pod.status?.initContainerStatuses?.[0];
    return side && side.restartCount >= 1 && side.state?.running && pod.status?.containerStatuses?.[0]?.state?.running ? pod : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(p.status!.phase, 'Running');
  assert.equal(p.status!.initContainerStatuses![0]!.lastState?.terminated?.exitCode, 1);
  assert.equal(p.status!.containerStatuses![0]!.restartCount, 0);
  await h!.api.delete(PODS, 'flaky', { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil('flaky gone', () => getPod(h!, 'flaky').then(() => false, () => true), { timeoutMs: 60_000 });
});
