/**
 * Node-pressure eviction on real pods: the real API server, containerd and agent. Pressure is made
 * without consuming memory: the agent is restarted with `evictionHard: memory.available` just above
 * what this machine has available now (read from /proc/meminfo, as the stats collector does), so
 * the threshold is met by the node's own numbers. The disk is never filled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { pollUntil } from '@nodelet/base';
import { EVENTS, NODES, PODS } from '@nodelet/api';
import { parseMeminfo } from '../../src/stats/node-readings.js';
import { expectRefusedUnderPressure, getPod, podSpec, skipUnlessRoot, startHarness } from './harness.js';

const Mi = 2 ** 20;

test('memory pressure: MemoryPressure=True, the BestEffort pod evicted with kubelet\'s status and event, new BestEffort pods refused, the critical Guaranteed pod stays', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('evict', {}, 21);
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  const sleeper = { name: 'main', image: img, imagePullPolicy: 'IfNotPresent' as const, command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] };
  await h.api.create(PODS, podSpec(h, 'best-effort', { containers: [sleeper] }));
  await h.api.create(PODS, podSpec(h, 'critical', {
    containers: [{ ...sleeper, resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '50m', memory: '64Mi' } } }],
    priorityClassName: 'system-node-critical',
  }));
  for (const name of ['best-effort', 'critical']) await pollUntil(`${name} Running`, async () => (await getPod(h, name)).status?.phase === 'Running', { timeoutMs: 60_000 });
  const pressure = async () => (await h.api.get(NODES, h.nodeName)).status?.conditions?.find((c) => c.type === 'MemoryPressure');
  assert.equal((await pressure())?.status, 'False', 'no pressure at the default 100Mi');

  // A threshold 2Gi above what is available now: met on the node's own numbers, without using memory.
  const available = parseMeminfo(await readFile('/proc/meminfo', 'utf8')).availableBytes;
  const threshold = `${Math.ceil(available / Mi) + 2048}Mi`;
  await h.agent.close();
  await h.restartAgent({ evictionHard: { 'memory.available': threshold } });

  const cond = await pollUntil('MemoryPressure=True', async () => {
    const c = await pressure();
    return c?.status === 'True' ? c : undefined;
  }, { timeoutMs: 30_000 });
  assert.equal(cond.reason, 'KubeletHasInsufficientMemory');
  assert.equal(cond.message, 'kubelet has insufficient memory available');

  const evicted = await pollUntil('best-effort Failed/Evicted', async () => {
    const p = await getPod(h, 'best-effort');
    return p.status?.phase === 'Failed' && p.status.reason === 'Evicted' ? p : undefined;
  }, { timeoutMs: 40_000 });
  const msg = evicted.status!.message!;
  t.diagnostic(msg);
  assert.match(msg, new RegExp(`^The node was low on resource: memory\\. Threshold quantity: ${threshold}, available: \\d+(Ki|Mi|Gi)?\\. Container main was using \\d+(Ki|Mi)?, request is 0, has larger consumption of memory\\. $`));
  const dt = evicted.status!.conditions?.find((c) => c.type === 'DisruptionTarget');
  assert.deepEqual([dt?.status, dt?.reason, dt?.message], ['True', 'TerminationByKubelet', msg]);
  await pollUntil('the Evicted event', async () => (await h.api.list(EVENTS, { namespace: 'default' })).items.some((e) =>
    e.reason === 'Evicted' && e.type === 'Warning' && e.involvedObject?.name === 'best-effort' && e.message === msg), { timeoutMs: 15_000 });
  // Its container is stopped in the runtime, and it is not restarted (restartPolicy Always notwithstanding).
  await pollUntil('best-effort container stopped', async () => (await h.cri.runtime.listContainers({})).containers
    .filter((c) => c.labels['io.kubernetes.pod.name'] === 'best-effort' && c.state === 'CONTAINER_RUNNING').length === 0, { timeoutMs: 15_000 });

  // Admission under MemoryPressure: a new BestEffort pod is refused (no sandbox, Failed/Evicted with
  // kubelet's message and a Warning event); a Burstable one is admitted.
  await h.api.create(PODS, podSpec(h, 'late-best-effort', { containers: [sleeper] }));
  await h.api.create(PODS, podSpec(h, 'late-burstable', { containers: [{ ...sleeper, resources: { requests: { cpu: '10m' } } }] }));
  await expectRefusedUnderPressure(h, 'late-best-effort', 'The node had condition: [MemoryPressure]. ');
  // late-burstable is admitted: it gets a sandbox. (Pressure persists, so the next monitoring round
  // may well evict it: that is an eviction, never a refusal.) It requests CPU, not memory: the
  // node's allocatable memory is its capacity less the hard threshold, none here, so a memory
  // request would be OutOfmemory.
  await pollUntil('late-burstable has a sandbox', async () => (await h.cri.runtime.listPodSandbox({})).items.some((s) => s.metadata?.name === 'late-burstable'), { timeoutMs: 60_000 });
  assert.doesNotMatch((await getPod(h, 'late-burstable')).status?.message ?? '', /rejected/);

  // Pressure stays; the critical pod is never chosen. Wait for two more monitoring rounds of 10 s.
  const nodeEvents = async () => (await h.api.list(EVENTS, { namespace: 'default' })).items.find((e) => e.reason === 'EvictionThresholdMet' && e.involvedObject?.kind === 'Node');
  const first = await pollUntil('EvictionThresholdMet on the node', nodeEvents, { timeoutMs: 15_000 });
  await pollUntil('two more rounds with the threshold met', async () => ((await nodeEvents())?.count ?? 0) >= (first.count ?? 1) + 2, { timeoutMs: 40_000 });
  const critical = await getPod(h, 'critical');
  assert.equal(critical.status?.phase, 'Running');
  assert.equal(critical.status?.reason, undefined);
  assert.equal((await getPod(h, 'best-effort')).status?.containerStatuses?.[0]?.restartCount, 0);
  assert.ok((await h.api.list(EVENTS, { namespace: 'default' })).items.some((e) => e.reason === 'NodeHasInsufficientMemory'), 'node condition event');
});
