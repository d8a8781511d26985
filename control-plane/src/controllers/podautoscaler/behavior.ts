/**
 * Scaling behavior (upstream pkg/controller/podautoscaler horizontal.go, the *WithBehaviors
 * functions): the stabilization windows (the highest recommendation of the scale-down window and
 * the lowest of the scale-up window bound the new count) and the rate policies (Pods/Percent per
 * period, counted from the scale events of that period; selectPolicy Max, Min or Disabled), with
 * the condition reasons upstream sets. Pure but for the history object the caller keeps per HPA.
 */
import { defaultScaleDownRules, defaultScaleUpRules, type HPAScalingRules, type HorizontalPodAutoscalerSpec } from '@nodelet/api';

export interface Recommendation {
  replicas: number;
  atMs: number;
}

export interface ScaleEvent {
  change: number;
  atMs: number;
}

/** What the controller remembers of one HPA between syncs. */
export interface ScalingHistory {
  recommendations: Recommendation[];
  scaleUpEvents: ScaleEvent[];
  scaleDownEvents: ScaleEvent[];
}

export const emptyHistory = (): ScalingHistory => ({ recommendations: [], scaleUpEvents: [], scaleDownEvents: [] });

type Rules = Required<HPAScalingRules>;

/** The rules of both directions, the defaults filling what the spec leaves out (an HPA without behavior gets them all). */
export function rulesOf(spec: Pick<HorizontalPodAutoscalerSpec, 'behavior'>): { up: Rules; down: Rules } {
  const fill = (r: HPAScalingRules | undefined, d: Rules): Rules => ({
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? d.stabilizationWindowSeconds,
    selectPolicy: r?.selectPolicy ?? d.selectPolicy,
    policies: r?.policies ?? d.policies,
  });
  return { up: fill(spec.behavior?.scaleUp, defaultScaleUpRules()), down: fill(spec.behavior?.scaleDown, defaultScaleDownRules()) };
}

export interface ConditionChange {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface NormalizeResult {
  replicas: number;
  /** AbleToScale after stabilization. */
  ableToScale: ConditionChange;
  /** ScalingLimited after the rate and min/max bounds. */
  scalingLimited: ConditionChange;
}

const sinceMs = (events: readonly ScaleEvent[], periodSeconds: number, nowMs: number): number =>
  events.filter((e) => e.atMs > nowMs - periodSeconds * 1000).reduce((s, e) => s + e.change, 0);

/** The most replicas the scale-up policies allow now. */
export function scaleUpLimit(current: number, h: ScalingHistory, rules: Rules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
  for (const p of rules.policies) {
    const start = current - sinceMs(h.scaleUpEvents, p.periodSeconds, nowMs) + sinceMs(h.scaleDownEvents, p.periodSeconds, nowMs);
    result = pick(result, p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100)));
  }
  return result;
}

/** The fewest replicas the scale-down policies allow now. */
export function scaleDownLimit(current: number, h: ScalingHistory, rules: Rules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
  for (const p of rules.policies) {
    const start = current - sinceMs(h.scaleUpEvents, p.periodSeconds, nowMs) + sinceMs(h.scaleDownEvents, p.periodSeconds, nowMs);
    result = pick(result, p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100)));
  }
  return result;
}

/**
 * The count to set given the metrics' `desired`: stabilized over the windows, then limited by the
 * policies and min/max. Records `desired` among the recommendations (and drops those older than
 * both windows).
 */
export function normalizeReplicas(a: { current: number; desired: number; min: number; max: number; rules: { up: Rules; down: Rules }; history: ScalingHistory; nowMs: number }): NormalizeResult {
  const { current, desired, min, max, rules, history: h, nowMs } = a;
  const upCutoff = nowMs - rules.up.stabilizationWindowSeconds * 1000;
  const downCutoff = nowMs - rules.down.stabilizationWindowSeconds * 1000;
  let upRec = desired;
  let downRec = desired;
  for (const r of h.recommendations) {
    if (r.atMs > upCutoff) upRec = Math.min(upRec, r.replicas);
    if (r.atMs > downCutoff) downRec = Math.max(downRec, r.replicas);
  }
  h.recommendations = h.recommendations.filter((r) => r.atMs > Math.min(upCutoff, downCutoff));
  h.recommendations.push({ replicas: desired, atMs: nowMs });
  const stabilized = Math.min(Math.max(current, upRec), downRec);
  let ableToScale: ConditionChange = { status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
  if (stabilized < desired) ableToScale = { status: 'True', reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' };
  if (stabilized > desired) ableToScale = { status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };

  let replicas = stabilized;
  let limited: ConditionChange = { status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
  if (stabilized > current) {
    const limit = Math.max(scaleUpLimit(current, h, rules.up, nowMs), current);
    const [most, reason, message] = max > limit
      ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
      : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
    if (stabilized > most) [replicas, limited] = [most, { status: 'True', reason, message }];
  } else if (stabilized < current) {
    const limit = Math.min(scaleDownLimit(current, h, rules.down, nowMs), current);
    const [least, reason, message] = min < limit
      ? [limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate']
      : [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
    if (stabilized < least) [replicas, limited] = [least, { status: 'True', reason, message }];
  }
  return { replicas, ableToScale, scalingLimited: limited };
}

/** Remembers a rescale for the policies; drops events older than the longest period. */
export function recordScale(h: ScalingHistory, rules: { up: Rules; down: Rules }, from: number, to: number, nowMs: number): void {
  const longest = (r: Rules): number => Math.max(0, ...r.policies.map((p) => p.periodSeconds)) * 1000;
  h.scaleUpEvents = h.scaleUpEvents.filter((e) => e.atMs > nowMs - longest(rules.up));
  h.scaleDownEvents = h.scaleDownEvents.filter((e) => e.atMs > nowMs - longest(rules.down));
  if (to > from) h.scaleUpEvents.push({ change: to - from, atMs: nowMs });
  else if (to < from) h.scaleDownEvents.push({ change: from - to, atMs: nowMs });
}
