import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { resolveEvictionConfig, thresholdAmount } from './thresholds.js';

test('defaults are kubelet\'s evictionHard, a 5m transition period and no soft thresholds', () => {
  const c = resolveEvictionConfig({});
  assert.deepEqual(c.evictionHard, { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' });
  assert.deepEqual(c.evictionThresholds.map((t) => [t.signal, t.value, t.gracePeriodMs]), [
    ['memory.available', { quantity: 100 * 2 ** 20 }, 0],
    ['nodefs.available', { percentage: 0.1 }, 0],
    ['nodefs.inodesFree', { percentage: 0.05 }, 0],
    ['imagefs.available', { percentage: 0.15 }, 0],
  ]);
  assert.equal(c.evictionPressureTransitionPeriodMs, 300_000);
  assert.equal(c.evictionMaxPodGracePeriodS, 0);
});

test('evictionHard replaces the defaults; soft thresholds carry their grace; minimum reclaim applies to both; zero disables', () => {
  const c = resolveEvictionConfig({
    evictionHard: { 'memory.available': '1Gi', 'nodefs.available': '0%' },
    evictionSoft: { 'memory.available': '2Gi' },
    evictionSoftGracePeriod: { 'memory.available': '1m30s' },
    evictionMinimumReclaim: { 'memory.available': '500Mi' },
    evictionPressureTransitionPeriod: '30s',
    evictionMaxPodGracePeriod: 20,
  });
  assert.deepEqual(c.evictionHard, { 'memory.available': '1Gi', 'nodefs.available': '0%' });
  assert.deepEqual(c.evictionThresholds.map((t) => [t.signal, t.raw, t.gracePeriodMs, t.minReclaim]), [
    ['memory.available', '1Gi', 0, { quantity: 500 * 2 ** 20 }],
    ['memory.available', '2Gi', 90_000, { quantity: 500 * 2 ** 20 }],
  ]);
  assert.equal(c.evictionPressureTransitionPeriodMs, 30_000);
  assert.equal(c.evictionMaxPodGracePeriodS, 20);
});

test('bad eviction settings are refused naming the field', () => {
  const cases: Array<[Parameters<typeof resolveEvictionConfig>[0], RegExp]> = [
    [{ evictionHard: { 'memory.free': '1Mi' } }, /evictionHard\.memory\.free: unknown eviction signal/],
    [{ evictionHard: { 'nodefs.available': '120%' } }, /evictionHard\.nodefs\.available: percentage out of range/],
    [{ evictionHard: { 'memory.available': 'lots' } }, /evictionHard\.memory\.available: must be a quantity or a percentage/],
    [{ evictionHard: { 'memory.available': '-1Mi' } }, /must be positive/],
    [{ evictionSoft: { 'memory.available': '1Gi' } }, /evictionSoftGracePeriod\.memory\.available: a soft eviction threshold needs a positive grace period/],
    [{ evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '90' } }, /evictionSoftGracePeriod\.memory\.available: must be a duration/],
    [{ evictionSoftGracePeriod: { 'memory.available': '1m' } }, /evictionSoftGracePeriod\.memory\.available: no evictionSoft threshold/],
    [{ evictionMinimumReclaim: { 'pid.available': '10' } }, /evictionMinimumReclaim\.pid\.available: no evictionHard or evictionSoft threshold/],
    [{ evictionPressureTransitionPeriod: 'soon' }, /evictionPressureTransitionPeriod: must be a duration/],
    [{ evictionMaxPodGracePeriod: -1 }, /evictionMaxPodGracePeriod: must be an integer/],
  ];
  for (const [file, re] of cases) {
    assert.throws(() => resolveEvictionConfig(file), (err: unknown) => hasCode(err, 'ERR_INVALID_ARGUMENT') && re.test((err as Error).message), JSON.stringify(file));
  }
});

test('a percentage threshold is truncated to whole units of the capacity', () => {
  assert.equal(thresholdAmount({ percentage: 0.1 }, 1005), 100);
  assert.equal(thresholdAmount({ quantity: 7 }, 1005), 7);
});
