/**
 * Graceful node shutdown on real pods: the real API server, containerd and the agent; only logind
 * is the fake (agent/src/nodeshutdown/testing/): its PrepareForShutdown fires the shutdown. The
 * D-Bus side against a real logind is test/systemd/logind-shutdown.itest.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { NODES, PODS, type Pod } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod } from './harness.js';
import { FakeInhibitor } from '../../src/nodeshutdown/testing/fake-inhibitor.js';

const ready = async (h: Awaited<ReturnType<typeof startHarness>>) => (await h.api.get(NODES, h.nodeName)).status?.conditions?.find((c) => c.type === 'Ready');
const finishedAt = (p: Pod): number => Date.parse(p.status!.containerStatuses![0]!.state!.terminated!.finishedAt!);

test('PrepareForShutdown stops regular pods, then critical ones, writes the shutdown status, then releases the lock; a cancellation makes the node Ready again', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const inhibitor = Object.assign(new FakeInhibitor(), { delayMaxMs: 30_000 });
  const h = await startHarness('shutdown', { shutdownGracePeriod: '20s', shutdownGracePeriodCriticalPods: '8s' }, 1, { inhibitor });
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  const loop = (onTerm: string) => ({ name: 'main', image: img, imagePullPolicy: 'IfNotPresent' as const, command: ['sh', '-c', `trap "${onTerm}" TERM; while true; do sleep 0.2; done`] });
  await h.api.create(PODS, podSpec(h, 'web', { containers: [loop('exit 143')], terminationGracePeriodSeconds: 30 }));
  // Exits 0 on SIGTERM: Succeeded stays (kubelet only turns other phases into Failed), with the shutdown reason.
  await h.api.create(PODS, podSpec(h, 'clean', { containers: [loop('exit 0')] }));
  // Ignores SIGTERM: stopped by SIGKILL after its own 3 s grace, shorter than the regular share (12 s).
  await h.api.create(PODS, podSpec(h, 'stubborn', { containers: [loop('')], terminationGracePeriodSeconds: 3 }));
  await h.api.create(PODS, podSpec(h, 'critical', { containers: [loop('exit 143')], priorityClassName: 'system-node-critical' }));
  for (const name of ['web', 'clean', 'stubborn', 'critical']) {
    await pollUntil(`${name} Running`, async () => (await getPod(h, name)).status?.phase === 'Running', { timeoutMs: 60_000 });
  }
  await pollUntil('node Ready and the lock held', async () => inhibitor.held === 1 && (await ready(h))?.status === 'True', { timeoutMs: 30_000 });

  const firedAt = Date.now();
  inhibitor.prepareForShutdown(true);
  const notReady = await pollUntil('node NotReady', async () => {
    const c = await ready(h);
    return c?.status === 'False' ? c : undefined;
  }, { timeoutMs: 10_000 });
  assert.equal(notReady.reason, 'KubeletNotReady');
  assert.equal(notReady.message, 'node is shutting down');

  await pollUntil('the lock released', () => inhibitor.held === 0, { timeoutMs: 30_000 });
  const releasedAt = Date.now();
  // Every pod is stopped before the lock goes, and none runs any more in the runtime.
  const running = (await h.cri.runtime.listContainers({})).containers.filter((c) => c.state === 'CONTAINER_RUNNING');
  assert.deepEqual(running.map((c) => c.metadata?.name), []);
  assert.ok(releasedAt - firedAt >= 3000, `the stubborn pod's 3 s grace was waited for (${releasedAt - firedAt} ms)`);
  assert.ok(releasedAt - firedAt < 20_000, 'not the whole shutdownGracePeriod: every group ended early');

  const pods: Record<string, Pod> = {};
  for (const name of ['web', 'clean', 'stubborn', 'critical']) {
    const phase = name === 'clean' ? 'Succeeded' : 'Failed';
    pods[name] = await pollUntil(`${name} ${phase} with the shutdown status`, async () => {
      const p = await getPod(h, name);
      return p.status?.phase === phase && p.status.reason === 'Terminated' && p.status.containerStatuses?.[0]?.state?.terminated ? p : undefined;
    }, { timeoutMs: 15_000 });
    const st = pods[name]!.status!;
    assert.equal(st.message, 'Pod was terminated in response to imminent node shutdown.');
    const dt = st.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.equal(dt?.status, 'True', name);
    assert.equal(dt?.reason, 'TerminationByKubelet', name);
  }
  assert.equal(pods.stubborn!.status!.containerStatuses![0]!.state!.terminated!.exitCode, 137, 'SIGKILL after its grace');
  assert.equal(pods.web!.status!.containerStatuses![0]!.state!.terminated!.exitCode, 143, 'stopped by SIGTERM');
  // The critical pod is stopped only after the regular group ended (the stubborn pod's kill).
  assert.ok(finishedAt(pods.critical!) >= finishedAt(pods.stubborn!), 'critical pod stopped after the regular pods');

  inhibitor.prepareForShutdown(false);
  await pollUntil('node Ready again and the lock taken again', async () => inhibitor.held === 1 && (await ready(h))?.status === 'True', { timeoutMs: 15_000 });
  // The stopped pods stay stopped (they are Failed in the API, not restarted).
  const after = await getPod(h, 'web');
  assert.equal(after.status?.phase, 'Failed');
  assert.equal(after.status?.containerStatuses?.[0]?.restartCount, 0);
  assert.equal((await h.cri.runtime.listContainers({})).containers.filter((c) => c.state === 'CONTAINER_RUNNING').length, 0);
});
