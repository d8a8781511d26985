// Table-driven tests of the replica calculation and the scaling behavior (stabilization, policies).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { calculateReplicas, CalcError, type CalcPod, type PodSample } from './replica-calculator.js';
import { emptyHistory, normalizeReplicas, recordScale, rulesOf } from './behavior.js';

const NOW = 1_000_000_000;
const MIN = 60_000;
/** A pod started 10 minutes ago and ready since 9, requesting 100m. */
const pod = (name: string, o: Partial<CalcPod> = {}): CalcPod => ({ name, phase: 'Running', deleting: false, startMs: NOW - 10 * MIN, ready: { status: 'True', lastTransitionMs: NOW - 9 * MIN }, request: 100, ...o });
const sample = (value: number): PodSample => ({ value, timeMs: NOW - 5_000, windowMs: 10_000 });

describe('calculateReplicas', () => {
  const cases: Array<{ name: string; current: number; pods: CalcPod[]; usage: Record<string, number>; target?: { utilization: number } | { averageValue: number }; cpu?: boolean; want: number; utilization?: number }> = [
    { name: 'above target scales up by the ratio', current: 2, pods: [pod('a'), pod('b')], usage: { a: 90, b: 90 }, target: { utilization: 50 }, want: 4, utilization: 90 },
    { name: 'below target scales down', current: 4, pods: ['a', 'b', 'c', 'd'].map((n) => pod(n)), usage: { a: 10, b: 10, c: 10, d: 10 }, target: { utilization: 50 }, want: 1, utilization: 10 },
    { name: 'within the 10% tolerance keeps the count', current: 3, pods: ['a', 'b', 'c'].map((n) => pod(n)), usage: { a: 54, b: 54, c: 54 }, target: { utilization: 50 }, want: 3, utilization: 54 },
    { name: 'just past the tolerance moves', current: 3, pods: ['a', 'b', 'c'].map((n) => pod(n)), usage: { a: 56, b: 56, c: 56 }, target: { utilization: 50 }, want: 4, utilization: 56 },
    { name: 'average value target', current: 2, pods: [pod('a'), pod('b')], usage: { a: 300, b: 300 }, target: { averageValue: 200 }, want: 3 },
    { name: 'missing pod on scale-up counts as 0', current: 3, pods: ['a', 'b', 'c'].map((n) => pod(n)), usage: { a: 100, b: 100 }, target: { utilization: 50 }, want: 4, utilization: 100 },
    { name: 'missing pod on scale-down counts as its full request', current: 4, pods: ['a', 'b', 'c', 'd'].map((n) => pod(n)), usage: { a: 10, b: 10, c: 10 }, target: { utilization: 50 }, want: 3, utilization: 10 },
    { name: 'missing pod that reverses the direction keeps the count', current: 2, pods: [pod('a'), pod('b')], usage: { a: 40 }, target: { utilization: 50 }, want: 2, utilization: 40 },
    { name: 'unready pod on scale-up counts as 0', current: 3, pods: [pod('a'), pod('b'), pod('c', { ready: { status: 'False', lastTransitionMs: NOW - 9.9 * MIN } })], usage: { a: 150, b: 150, c: 500 }, target: { utilization: 50 }, want: 6, utilization: 150 },
    { name: 'unready pod on scale-down is left out', current: 3, pods: [pod('a'), pod('b'), pod('c', { ready: { status: 'False', lastTransitionMs: NOW - 9.9 * MIN } })], usage: { a: 10, b: 10, c: 500 }, target: { utilization: 50 }, want: 1, utilization: 10 },
    { name: 'a pod in its CPU initialization period whose sample predates readiness is unready', current: 2, pods: [pod('a'), pod('b', { startMs: NOW - MIN, ready: { status: 'True', lastTransitionMs: NOW - 8_000 } })], usage: { a: 100, b: 900 }, target: { utilization: 50 }, want: 2, utilization: 100 },
    { name: 'a pod unready long after start (failing, not starting) still counts', current: 2, pods: [pod('a'), pod('b', { ready: { status: 'False', lastTransitionMs: NOW - MIN } })], usage: { a: 100, b: 100 }, target: { utilization: 50 }, want: 4, utilization: 100 },
    { name: 'memory ignores readiness', current: 2, cpu: false, pods: [pod('a'), pod('b', { ready: { status: 'False', lastTransitionMs: NOW - 9.9 * MIN } })], usage: { a: 100, b: 100 }, target: { utilization: 50 }, want: 4, utilization: 100 },
    { name: 'pending, failed and deleting pods are ignored', current: 2, pods: [pod('a'), pod('p', { phase: 'Pending' }), pod('f', { phase: 'Failed' }), pod('d', { deleting: true })], usage: { a: 100 }, target: { utilization: 50 }, want: 2, utilization: 100 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const samples = new Map(Object.entries(c.usage).map(([n, v]) => [n, sample(v)]));
      const r = calculateReplicas({ currentReplicas: c.current, pods: c.pods, samples, cpu: c.cpu ?? true, target: c.target ?? { utilization: 50 }, nowMs: NOW });
      assert.equal(r.replicas, c.want);
      if (c.utilization !== undefined) assert.equal(r.utilization, c.utilization);
    });
  }

  it('refuses what upstream refuses', () => {
    const calc = (pods: CalcPod[], usage: Record<string, number>) => () =>
      calculateReplicas({ currentReplicas: 1, pods, samples: new Map(Object.entries(usage).map(([n, v]) => [n, sample(v)])), cpu: true, target: { utilization: 50 }, nowMs: NOW });
    assert.throws(calc([], {}), (e: unknown) => e instanceof CalcError && /no pods returned by selector/.test(e.message));
    assert.throws(calc([pod('a')], {}), /did not receive metrics for targeted pods/);
    assert.throws(calc([pod('a', { request: undefined })], { a: 1 }), /missing request for cpu in pod a/);
  });
});

describe('normalizeReplicas', () => {
  const spec = (behavior?: Record<string, unknown>) => ({ behavior }) as Parameters<typeof rulesOf>[0];

  it('scale-up: at most the larger of +4 pods and +100% per 15 s, then TooManyReplicas at max', () => {
    const rules = rulesOf(spec());
    const h = emptyHistory();
    const r = normalizeReplicas({ current: 1, desired: 20, min: 1, max: 50, rules, history: h, nowMs: NOW });
    assert.deepEqual([r.replicas, r.scalingLimited.reason], [5, 'ScaleUpLimit']);
    recordScale(h, rules, 1, 5, NOW);
    // Within the same 15 s the period started at 1: still at most 5.
    assert.equal(normalizeReplicas({ current: 5, desired: 20, min: 1, max: 50, rules, history: h, nowMs: NOW + 5_000 }).replicas, 5);
    // A period later it may double.
    assert.equal(normalizeReplicas({ current: 5, desired: 20, min: 1, max: 50, rules, history: h, nowMs: NOW + 16_000 }).replicas, 10);
    const capped = normalizeReplicas({ current: 5, desired: 8, min: 1, max: 6, rules, history: emptyHistory(), nowMs: NOW });
    assert.deepEqual([capped.replicas, capped.scalingLimited.reason, capped.scalingLimited.status], [6, 'TooManyReplicas', 'True']);
  });

  it('scale-down waits out the 300 s window with the highest recent recommendation', () => {
    const rules = rulesOf(spec());
    const h = emptyHistory();
    assert.equal(normalizeReplicas({ current: 4, desired: 4, min: 1, max: 10, rules, history: h, nowMs: NOW }).replicas, 4);
    const held = normalizeReplicas({ current: 4, desired: 1, min: 1, max: 10, rules, history: h, nowMs: NOW + 60_000 });
    assert.deepEqual([held.replicas, held.ableToScale.reason], [4, 'ScaleDownStabilized']);
    const after = normalizeReplicas({ current: 4, desired: 1, min: 1, max: 10, rules, history: h, nowMs: NOW + 301_000 });
    assert.deepEqual([after.replicas, after.ableToScale.reason, after.scalingLimited.reason], [1, 'ReadyForNewScale', 'DesiredWithinRange']);
  });

  it('a scale-up window takes the lowest recent recommendation; policies and selectPolicy', () => {
    const rules = rulesOf(spec({ scaleUp: { stabilizationWindowSeconds: 60 }, scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }, { type: 'Percent', value: 50, periodSeconds: 60 }] } }));
    const h = emptyHistory();
    normalizeReplicas({ current: 2, desired: 3, min: 1, max: 10, rules, history: h, nowMs: NOW });
    const up = normalizeReplicas({ current: 2, desired: 8, min: 1, max: 10, rules, history: h, nowMs: NOW + 10_000 });
    assert.deepEqual([up.replicas, up.ableToScale.reason], [3, 'ScaleUpStabilized']);
    // Min of the scale-down policies is the smaller change: -1 pod rather than -50 %.
    const down = normalizeReplicas({ current: 8, desired: 1, min: 1, max: 10, rules, history: emptyHistory(), nowMs: NOW });
    assert.deepEqual([down.replicas, down.scalingLimited.reason], [7, 'ScaleDownLimit']);
    const disabled = rulesOf(spec({ scaleDown: { selectPolicy: 'Disabled' } }));
    assert.equal(normalizeReplicas({ current: 8, desired: 1, min: 1, max: 10, rules: { ...disabled, down: { ...disabled.down, stabilizationWindowSeconds: 0 } }, history: emptyHistory(), nowMs: NOW }).replicas, 8);
    const floor = normalizeReplicas({ current: 3, desired: 1, min: 2, max: 10, rules: rulesOf(spec({ scaleDown: { stabilizationWindowSeconds: 0 } })), history: emptyHistory(), nowMs: NOW });
    assert.deepEqual([floor.replicas, floor.scalingLimited.reason], [2, 'TooFewReplicas']);
  });
});
