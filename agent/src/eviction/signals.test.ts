import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  byEvictionPriority, conditionsObservedSince, nodeConditions, observe, thresholdsFirstObservedAt, thresholdsMet, thresholdsMetGracePeriod,
  thresholdsUpdatedStats, type PressureCondition,
} from './signals.js';
import { resolveEvictionConfig } from './thresholds.js';
import { Gi, Mi, summary } from './testing/fixtures.js';

const T0 = Date.UTC(2026, 0, 1);

test('signals: memory.available is capacity − working set; nodefs and imagefs from their filesystems', () => {
  const obs = observe(summary({ at: T0, memAvailable: 3 * Gi, memWorkingSet: Gi, fs: { available: 20 * Gi, capacity: 100 * Gi, inodesFree: 900, inodes: 1000 }, imageFs: { available: 10 * Gi, capacity: 50 * Gi } }));
  assert.deepEqual(obs.get('memory.available'), { available: 3 * Gi, capacity: 4 * Gi, timeMs: T0 });
  assert.deepEqual(obs.get('nodefs.available'), { available: 20 * Gi, capacity: 100 * Gi, timeMs: T0 });
  assert.deepEqual(obs.get('nodefs.inodesFree'), { available: 900, capacity: 1000, timeMs: T0 });
  assert.deepEqual(obs.get('imagefs.available'), { available: 10 * Gi, capacity: 50 * Gi, timeMs: T0 });
  assert.equal(obs.has('imagefs.inodesFree'), false, 'no numbers, no signal');
  assert.equal(obs.has('pid.available'), false);
});

test('thresholds: quantities and percentages of the capacity; minimum reclaim keeps a met threshold met', () => {
  const { evictionThresholds: ts } = resolveEvictionConfig({ evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' }, evictionMinimumReclaim: { 'memory.available': '50Mi' } });
  const at = (memAvailable: number, fsAvailable: number) => observe(summary({ at: T0, memAvailable, memWorkingSet: Gi, fs: { available: fsAvailable, capacity: 100 * Gi } }));
  assert.deepEqual(thresholdsMet(ts, at(99 * Mi, 11 * Gi), false).map((t) => t.signal), ['memory.available']);
  assert.deepEqual(thresholdsMet(ts, at(100 * Mi, 9 * Gi), false).map((t) => t.signal), ['nodefs.available'], 'exactly at the threshold is not below it');
  // 120Mi is above the threshold, but not above threshold + minimum reclaim (150Mi).
  assert.deepEqual(thresholdsMet(ts, at(120 * Mi, 50 * Gi), false), []);
  assert.deepEqual(thresholdsMet(ts, at(120 * Mi, 50 * Gi), true).map((t) => t.signal), ['memory.available']);
  assert.deepEqual(thresholdsMet(ts, at(151 * Mi, 50 * Gi), true), []);
});

test('grace periods: a soft threshold drives eviction only after it was met for its whole grace period', () => {
  const { evictionThresholds: ts } = resolveEvictionConfig({ evictionHard: { 'memory.available': '100Mi' }, evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } });
  const obs = observe(summary({ at: T0, memAvailable: 500 * Mi, memWorkingSet: Gi }));
  const met = thresholdsMet(ts, obs, false);
  assert.equal(met.length, 1, 'only the soft one');
  let first = thresholdsFirstObservedAt(met, new Map(), T0);
  assert.deepEqual(thresholdsMetGracePeriod(met, first, T0 + 59_000), []);
  first = thresholdsFirstObservedAt(met, first, T0 + 59_000);
  assert.equal(thresholdsMetGracePeriod(met, first, T0 + 60_000).length, 1, 'first observation is kept');
  assert.deepEqual([...nodeConditions(met)], ['MemoryPressure'], 'the condition does not wait for the grace period');
  // Not met for a round: the clock starts again.
  first = thresholdsFirstObservedAt([], first, T0 + 61_000);
  assert.equal(first.size, 0);
});

test('conditions stay for the transition period after they were last observed', () => {
  const last = new Map<PressureCondition, number>([['MemoryPressure', T0], ['DiskPressure', T0 - 300_000]]);
  assert.deepEqual([...conditionsObservedSince(last, 300_000, T0 + 299_999)], ['MemoryPressure']);
  assert.deepEqual([...conditionsObservedSince(last, 300_000, T0 + 300_000)], []);
});

test('stale numbers do not drive eviction twice; memory is acted on first', () => {
  const { evictionThresholds: ts } = resolveEvictionConfig({ evictionHard: { 'nodefs.available': '10%', 'memory.available': '100Mi' } });
  const a = observe(summary({ at: T0, memAvailable: 50 * Mi, memWorkingSet: Gi, fs: { available: Gi, capacity: 100 * Gi } }));
  const met = thresholdsMet(ts, a, false);
  assert.deepEqual(byEvictionPriority(met).map((t) => t.signal), ['memory.available', 'nodefs.available']);
  assert.equal(thresholdsUpdatedStats(met, a, undefined).length, 2);
  assert.equal(thresholdsUpdatedStats(met, a, a).length, 0);
  const b = observe(summary({ at: T0 + 10_000, memAvailable: 50 * Mi, memWorkingSet: Gi, fs: { available: Gi, capacity: 100 * Gi } }));
  assert.equal(thresholdsUpdatedStats(met, b, a).length, 2);
});
