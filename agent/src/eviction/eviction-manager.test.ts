import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { Pod, PodStatus } from '@nodelet/api';
import type { Summary } from '../stats/types.js';
import { EvictionManager } from './eviction-manager.js';
import { resolveEvictionConfig, type EvictionConfigFile } from './thresholds.js';
import { Gi, Mi, pod, podStats, summary } from './testing/fixtures.js';

interface World {
  clock: FakeClock;
  mgr: EvictionManager;
  /** Available memory the next Summary reports. */
  mem: { available: number };
  disk: { available: number };
  pods: Pod[];
  killed: Array<{ name: string; grace: number; status: PodStatus }>;
  events: string[];
  nodeEvents: string[];
  pokes: number;
  reclaims: number;
  /** Disk freed by a reclaim. */
  reclaimFrees: number;
}

function world(file: EvictionConfigFile, pods: Pod[], usage: Record<string, number>): World {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const cfg = resolveEvictionConfig(file);
  const w = { clock, mem: { available: 4 * Gi }, disk: { available: 50 * Gi }, pods, killed: [], events: [], nodeEvents: [], pokes: 0, reclaims: 0, reclaimFrees: 0 } as unknown as World;
  const sum = (): Summary =>
    summary(
      { at: clock.now(), memAvailable: w.mem.available, memWorkingSet: 8 * Gi - w.mem.available, fs: { available: w.disk.available, capacity: 100 * Gi } },
      w.pods.filter((p) => usage[p.metadata.name!] !== undefined).map((p) => podStats(p, { c: usage[p.metadata.name!]! })),
    );
  w.mgr = new EvictionManager({
    nodeName: 'n1',
    thresholds: cfg.evictionThresholds,
    pressureTransitionPeriodMs: cfg.evictionPressureTransitionPeriodMs,
    maxPodGracePeriodS: cfg.evictionMaxPodGracePeriodS,
    summary: async () => sum(),
    activePods: () => w.pods,
    killPod: async (p, grace, statusFn) => {
      const status: PodStatus = { phase: 'Running' };
      statusFn(status);
      w.killed.push({ name: p.metadata.name!, grace, status });
      w.pods = w.pods.filter((x) => x !== p);
    },
    reclaimDisk: async () => {
      w.reclaims++;
      w.disk.available += w.reclaimFrees;
    },
    podEvent: (p, type, reason, message) => w.events.push(`${p.metadata.name} ${type} ${reason} ${message}`),
    nodeEvent: (type, reason, message) => w.nodeEvents.push(`${type} ${reason} ${message}`),
    onConditionsChanged: () => w.pokes++,
    clock,
    log: noopLogger,
  });
  return w;
}

const round = async (w: World, advanceMs = 10_000): Promise<Pod | undefined> => {
  w.clock.advance(advanceMs);
  return w.mgr.synchronize(AbortSignal.timeout(5000));
};

test('a hard memory threshold: MemoryPressure at once, one pod per round by rank, critical pods never, kubelet\'s status and event', async () => {
  const pods = [
    pod('guaranteed', { c: '200Mi' }),
    pod('critical', { c: undefined }, { priorityClassName: 'system-node-critical' }),
    pod('best-effort', { c: undefined }),
    pod('burstable', { c: '10Mi' }),
  ];
  const w = world({ evictionHard: { 'memory.available': '1Gi' } }, pods, { guaranteed: 100 * Mi, critical: 400 * Mi, 'best-effort': 50 * Mi, burstable: 30 * Mi });
  assert.equal(await round(w), undefined);
  assert.deepEqual([...w.mgr.conditions()], []);

  w.mem.available = 900 * Mi;
  // critical ranks first (most above its request) but is skipped; best-effort is 50Mi above, burstable 20Mi.
  assert.equal((await round(w))?.metadata.name, 'best-effort');
  assert.deepEqual([...w.mgr.conditions()], ['MemoryPressure']);
  assert.equal(w.pokes, 1);
  assert.deepEqual(w.nodeEvents, ['Normal NodeHasInsufficientMemory Node n1 status is now: NodeHasInsufficientMemory', 'Warning EvictionThresholdMet Attempting to reclaim memory']);
  const [k] = w.killed;
  assert.equal(k!.grace, 1, 'hard threshold: 1 s');
  const msg = 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 900Mi. Container c was using 50Mi, request is 0, has larger consumption of memory. ';
  assert.deepEqual([k!.status.phase, k!.status.reason, k!.status.message], ['Failed', 'Evicted', msg]);
  assert.equal(k!.status.conditions?.[0]?.reason, 'TerminationByKubelet');
  assert.deepEqual(w.events, [`best-effort Warning Evicted ${msg}`]);

  // Next rounds: one pod each; the critical one stays.
  assert.equal((await round(w))?.metadata.name, 'burstable');
  assert.equal((await round(w))?.metadata.name, 'guaranteed', 'under its request, but pressure persists and it is the last candidate');
  assert.deepEqual(w.killed.map((x) => x.name), ['best-effort', 'burstable', 'guaranteed']);
  assert.equal(await round(w), undefined, 'only the critical pod is left');
  assert.deepEqual(w.pods.map((p) => p.metadata.name), ['critical']);
});

test('the condition outlives the pressure by evictionPressureTransitionPeriod, then clears with an event', async () => {
  const w = world({ evictionHard: { 'memory.available': '1Gi' }, evictionPressureTransitionPeriod: '1m' }, [], {});
  w.mem.available = 500 * Mi;
  await round(w);
  assert.deepEqual([...w.mgr.conditions()], ['MemoryPressure']);
  w.mem.available = 4 * Gi;
  await round(w, 10_000);
  await round(w, 40_000);
  assert.deepEqual([...w.mgr.conditions()], ['MemoryPressure'], '50 s after it was last met');
  await round(w, 10_000);
  assert.deepEqual([...w.mgr.conditions()], []);
  assert.equal(w.pokes, 2);
  assert.equal(w.nodeEvents.at(-1), 'Normal NodeHasSufficientMemory Node n1 status is now: NodeHasSufficientMemory');
});

test('a soft threshold sets the condition at once but evicts only after its grace period, with evictionMaxPodGracePeriod', async () => {
  const w = world(
    { evictionHard: { 'memory.available': '100Mi' }, evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '30s' }, evictionMaxPodGracePeriod: 7 },
    [pod('a', { c: undefined })],
    { a: 10 * Mi },
  );
  w.mem.available = 900 * Mi;
  assert.equal(await round(w), undefined);
  assert.deepEqual([...w.mgr.conditions()], ['MemoryPressure']);
  assert.equal(await round(w, 10_000), undefined);
  assert.equal(await round(w, 10_000), undefined);
  assert.equal((await round(w, 10_000))?.metadata.name, 'a', '30 s after it was first met');
  assert.equal(w.killed[0]!.grace, 7);
  assert.match(w.killed[0]!.status.message!, /^The node was low on resource: memory\. Threshold quantity: 1Gi, available: 900Mi\. /);
});

test('numbers not refreshed since the last round evict nobody', async () => {
  const w = world({ evictionHard: { 'memory.available': '1Gi' } }, [pod('a', { c: undefined }), pod('b', { c: undefined })], { a: Mi, b: Mi });
  w.mem.available = 500 * Mi;
  assert.ok(await round(w));
  assert.equal(await round(w, 0), undefined, 'same measurement time');
  assert.ok(await round(w));
});

test('disk pressure: node-level reclaim first; pods are evicted only when it was not enough', async () => {
  const pods = [pod('a', { c: undefined })];
  const w = world({ evictionHard: { 'nodefs.available': '10%' } }, pods, { a: Mi });
  w.disk.available = 5 * Gi;
  w.reclaimFrees = 10 * Gi;
  assert.equal(await round(w), undefined, 'reclaim freed enough');
  assert.equal(w.reclaims, 1);
  assert.deepEqual([...w.mgr.conditions()], ['DiskPressure'], 'the condition was seen this round');
  assert.equal(w.killed.length, 0);

  w.disk.available = 5 * Gi;
  w.reclaimFrees = Gi;
  assert.equal((await round(w))?.metadata.name, 'a');
  assert.equal(w.reclaims, 2);
  assert.match(w.killed[0]!.status.message!, /^The node was low on resource: ephemeral-storage\. Threshold quantity: 10Gi, available: 5Gi\. $/);
});

test('no thresholds configured: nothing is observed', async () => {
  const w = world({ evictionHard: { 'memory.available': '0' } }, [pod('a', { c: undefined })], { a: Mi });
  w.mem.available = 1;
  assert.equal(await round(w), undefined);
  assert.deepEqual([...w.mgr.conditions()], []);
});
