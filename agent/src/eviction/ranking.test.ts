import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStats } from '../stats/types.js';
import { evictedStatus, evictionMessage } from './message.js';
import { isCriticalForEviction, podRequest, rankForEviction } from './ranking.js';
import { observe } from './signals.js';
import { resolveEvictionConfig } from './thresholds.js';
import { Gi, Mi, pod, podStats, summary } from './testing/fixtures.js';

const names = (ps: Array<{ metadata: { name?: string } }>) => ps.map((p) => p.metadata.name);

test('memory ranking: usage above requests first, then lower priority, then more usage above requests', () => {
  const bestEffort = pod('best-effort', { c: undefined });
  const burstableOver = pod('burstable-over', { c: '10Mi' });
  const guaranteedUnder = pod('guaranteed-under', { c: '200Mi' });
  const bigUnder = pod('big-under', { c: '1Gi' });
  const highPrioOver = pod('high-prio-over', { c: undefined }, { priority: 1000 });
  const noStats = pod('no-stats', { c: undefined });
  const usage: Record<string, number> = { 'best-effort': 20 * Mi, 'burstable-over': 50 * Mi, 'guaranteed-under': 100 * Mi, 'big-under': 500 * Mi, 'high-prio-over': 300 * Mi };
  const stats = (p: Parameters<typeof podStats>[0]): PodStats | undefined => (usage[p.metadata.name!] === undefined ? undefined : podStats(p, { c: usage[p.metadata.name!]! }));
  const ranked = rankForEviction([guaranteedUnder, highPrioOver, bestEffort, bigUnder, burstableOver, noStats], 'memory.available', stats);
  // burstable-over is 40Mi above its request, best-effort 20Mi; both outrank pods under their requests,
  // and the high-priority pod, though over, goes after them; among those under requests, the one
  // furthest below goes last.
  assert.deepEqual(names(ranked), ['no-stats', 'burstable-over', 'best-effort', 'high-prio-over', 'guaranteed-under', 'big-under']);
});

test('critical pods: system priority classes, static and mirror pods', () => {
  assert.equal(isCriticalForEviction(pod('a', {}, { priorityClassName: 'system-node-critical' })), true);
  assert.equal(isCriticalForEviction(pod('b', {}, { priority: 2_000_000_000 })), true);
  assert.equal(isCriticalForEviction(pod('c', {}, { annotations: { 'kubernetes.io/config.source': 'file' } })), true);
  assert.equal(isCriticalForEviction(pod('d', {}, { annotations: { 'kubernetes.io/config.mirror': 'x' } })), true);
  assert.equal(isCriticalForEviction(pod('e', {}, { priority: 1000 })), false);
});

test('pod requests: the containers\' sum, at least the largest init container, plus overhead', () => {
  const p = pod('p', { a: '100Mi', b: '50Mi' });
  p.spec!.initContainers = [{ name: 'i', image: 'x', resources: { requests: { memory: '200Mi' } } }];
  p.spec!.overhead = { memory: '10Mi' };
  assert.equal(podRequest(p, 'memory'), 210 * Mi);
});

test('eviction message and status are kubelet\'s, word for word', () => {
  const { evictionThresholds: [t] } = resolveEvictionConfig({ evictionHard: { 'memory.available': '100Mi' } });
  const p = pod('web', { app: '64Mi', side: undefined, idle: undefined });
  const obs = observe(summary({ at: 0, memAvailable: 81236 * 1024, memWorkingSet: Gi }));
  const stats = () => podStats(p, { app: 100 * Mi, side: 1204 * 1024, idle: 0 });
  const msg = evictionMessage(p, t!, obs.get('memory.available'), stats);
  assert.equal(
    msg,
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 81236Ki. ' +
      'Container app was using 100Mi, request is 64Mi, has larger consumption of memory. ' +
      'Container side was using 1204Ki, request is 0, has larger consumption of memory. ',
  );
  assert.equal(evictionMessage(p, t!, obs.get('memory.available'), () => undefined), 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 81236Ki. ');
  const { evictionThresholds: [pct] } = resolveEvictionConfig({ evictionHard: { 'nodefs.available': '10%' } });
  const fsObs = observe(summary({ at: 0, memAvailable: 0, memWorkingSet: 0, fs: { available: 5 * Gi, capacity: 100 * Gi } }));
  assert.match(evictionMessage(p, pct!, fsObs.get('nodefs.available'), () => undefined), /^The node was low on resource: ephemeral-storage\. Threshold quantity: 10Gi, available: 5Gi\. $/);

  const status = { phase: 'Running' as const, conditions: [{ type: 'Ready', status: 'True' as const }] };
  evictedStatus(msg, () => Date.UTC(2026, 0, 1))(status);
  assert.equal(status.phase, 'Failed');
  assert.deepEqual([(status as { reason?: string }).reason, (status as { message?: string }).message], ['Evicted', msg]);
  const dt = status.conditions.find((c) => c.type === 'DisruptionTarget') as Record<string, unknown>;
  assert.deepEqual([dt.status, dt.reason, dt.message, dt.lastTransitionTime], ['True', 'TerminationByKubelet', msg, '2026-01-01T00:00:00Z']);
});
