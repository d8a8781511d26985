/**
 * Critical-pod admission on real pods (agent/src/admission/critical-preemption.ts): the real API
 * server, containerd and agent, on a node whose allocatable pods is 2. Two ordinary pods fill it;
 * a system-node-critical pod bound to it then evicts the BestEffort one (kubelet's choice: the
 * lowest QoS class first) with kubelet's status, condition and event, and runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { EVENTS, PODS } from '@nodelet/api';
import { getPod, podSpec, skipUnlessRoot, startHarness } from './harness.js';

test('a critical pod on a full node preempts the BestEffort pod and runs; an ordinary pod is still refused OutOfpods', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('critadmit', { maxPods: 2 }, 47);
  t.after(() => h.stop());
  const sleeper = { name: 'main', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent' as const, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] };
  await h.api.create(PODS, podSpec(h, 'best-effort', { containers: [sleeper] }));
  await h.api.create(PODS, podSpec(h, 'burstable', { containers: [{ ...sleeper, resources: { requests: { cpu: '10m' } } }] }));
  for (const name of ['best-effort', 'burstable']) await pollUntil(`${name} Running`, async () => (await getPod(h, name)).status?.phase === 'Running', { timeoutMs: 60_000 });

  // An ordinary third pod is refused as before.
  await h.api.create(PODS, podSpec(h, 'ordinary', { containers: [sleeper] }));
  const refused = await pollUntil('ordinary refused', async () => {
    const p = await getPod(h, 'ordinary');
    return p.status?.phase === 'Failed' ? p : undefined;
  }, { timeoutMs: 30_000 });
  assert.equal(refused.status?.reason, 'OutOfpods');
  assert.equal(refused.status?.message, "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2");

  // The critical pod: the BestEffort pod goes, the Burstable one stays.
  await h.api.create(PODS, podSpec(h, 'critical', { containers: [sleeper], priorityClassName: 'system-node-critical' }));
  const victim = await pollUntil('best-effort Failed/Preempting', async () => {
    const p = await getPod(h, 'best-effort');
    return p.status?.phase === 'Failed' && p.status.reason === 'Preempting' ? p : undefined;
  }, { timeoutMs: 30_000 });
  assert.equal(victim.status?.message, 'Preempted in order to admit critical pod');
  const dt = victim.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  assert.deepEqual([dt?.status, dt?.reason, dt?.message], ['True', 'TerminationByKubelet', 'Pod was preempted by Kubelet to accommodate a critical pod.']);
  await pollUntil('critical Running', async () => (await getPod(h, 'critical')).status?.phase === 'Running', { timeoutMs: 60_000 });
  await pollUntil('the Preempting event', async () => (await h.api.list(EVENTS, { namespace: 'default' })).items.some((e) =>
    e.reason === 'Preempting' && e.type === 'Warning' && e.involvedObject?.name === 'best-effort' && e.message === 'Preempted in order to admit critical pod'), { timeoutMs: 15_000 });
  await pollUntil('best-effort container stopped', async () => (await h.cri.runtime.listContainers({})).containers
    .filter((c) => c.labels['io.kubernetes.pod.name'] === 'best-effort' && c.state === 'CONTAINER_RUNNING').length === 0, { timeoutMs: 15_000 });
  const burstable = await getPod(h, 'burstable');
  assert.equal(burstable.status?.phase, 'Running');
  assert.equal(burstable.status?.reason, undefined);
});
