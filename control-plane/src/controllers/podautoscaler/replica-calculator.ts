/**
 * The replica count a resource metric asks for (upstream pkg/controller/podautoscaler
 * replica_calculator.go): usage ÷ target over the ready pods, no change within the tolerance, and
 * the second pass that assumes the worst for pods without metrics (100 % of their request, or the
 * target, on a scale-down; nothing on a scale-up) and nothing for not-yet-ready pods on a
 * scale-up, keeping the current count when that pass reverses the direction. Pure.
 */

/** A change smaller than this fraction of the target is no change (upstream --horizontal-pod-autoscaler-tolerance). */
export const DEFAULT_TOLERANCE = 0.1;
/** CPU samples from a pod's first 5 minutes count only once it has been ready for a whole window (--horizontal-pod-autoscaler-cpu-initialization-period). */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** A pod turning unready within 30 s of its start is taken as starting, not as failing (--horizontal-pod-autoscaler-initial-readiness-delay). */
export const INITIAL_READINESS_DELAY_MS = 30_000;

/** What the calculator needs of a pod. */
export interface CalcPod {
  name: string;
  phase: string;
  deleting: boolean;
  /** status.startTime in epoch ms, when set. */
  startMs?: number;
  /** The Ready condition, when present. */
  ready?: { status: string; lastTransitionMs: number };
  /** Sum of the containers' requests of the resource (in the metric's unit); undefined when a container has none. */
  request?: number;
}

/** One pod's usage sample (in the resource's unit: millicores, bytes). */
export interface PodSample {
  value: number;
  timeMs: number;
  windowMs: number;
}

export interface CalcInput {
  currentReplicas: number;
  pods: readonly CalcPod[];
  samples: ReadonlyMap<string, PodSample>;
  /** Whether the resource is CPU (only CPU gets the readiness treatment, as upstream). */
  cpu: boolean;
  /** A percentage of the request, or an average value (in the resource's unit). */
  target: { utilization: number } | { averageValue: number };
  nowMs: number;
  tolerance?: number;
  cpuInitializationPeriodMs?: number;
  initialReadinessDelayMs?: number;
}

export interface CalcResult {
  replicas: number;
  /** Average utilization in percent of request (utilization targets only). */
  utilization?: number;
  /** Average usage per pod with metrics, in the resource's unit. */
  averageValue: number;
}

/** Refusals, worded as upstream's errors. */
export class CalcError extends Error {}

type Group = 'ready' | 'unready' | 'missing' | 'ignored';

function groupOf(pod: CalcPod, sample: PodSample | undefined, i: CalcInput): Group {
  if (pod.deleting || pod.phase === 'Failed' || pod.phase === 'Pending') return 'ignored';
  if (!sample) return 'missing';
  if (!i.cpu) return 'ready';
  if (!pod.ready || pod.startMs === undefined) return 'unready';
  const initPeriod = i.cpuInitializationPeriodMs ?? CPU_INITIALIZATION_PERIOD_MS;
  const delay = i.initialReadinessDelayMs ?? INITIAL_READINESS_DELAY_MS;
  if (pod.startMs + initPeriod > i.nowMs) {
    // Still starting: its sample counts only if it is ready and the sample's window began after it became ready.
    return pod.ready.status === 'False' || sample.timeMs < pod.ready.lastTransitionMs + sample.windowMs ? 'unready' : 'ready';
  }
  // Past the period: unready only if it has never been ready since its start settled.
  return pod.ready.status === 'False' && pod.startMs + delay > pod.ready.lastTransitionMs ? 'unready' : 'ready';
}

/** Usage ÷ target of the pods in `values`; for utilization targets also the utilization in percent (truncated, as upstream). */
function ratioOf(values: ReadonlyMap<string, number>, requests: ReadonlyMap<string, number>, target: CalcInput['target']): { ratio: number; utilization?: number; average: number } {
  let used = 0;
  let requested = 0;
  for (const [name, v] of values) {
    used += v;
    requested += requests.get(name) ?? 0;
  }
  const average = values.size > 0 ? used / values.size : 0;
  if ('utilization' in target) {
    if (requested === 0) throw new CalcError('no metrics returned matched known pods');
    const utilization = Math.trunc((used * 100) / requested);
    return { ratio: utilization / target.utilization, utilization, average };
  }
  return { ratio: average / target.averageValue, average };
}

/** The replica count one resource metric asks for. Throws CalcError as upstream refuses. */
export function calculateReplicas(i: CalcInput): CalcResult {
  if (i.pods.length === 0) throw new CalcError('no pods returned by selector while calculating replica count');
  const tolerance = i.tolerance ?? DEFAULT_TOLERANCE;
  const requests = new Map<string, number>();
  const groups = new Map<string, Group>();
  for (const p of i.pods) {
    groups.set(p.name, groupOf(p, i.samples.get(p.name), i));
    if ('utilization' in i.target) {
      if (p.request === undefined) throw new CalcError(`missing request for ${i.cpu ? 'cpu' : 'the resource'} in pod ${p.name}`);
      requests.set(p.name, p.request);
    }
  }
  const byGroup = (g: Group): string[] => [...groups].filter(([, x]) => x === g).map(([n]) => n);
  const ready = byGroup('ready');
  const unready = byGroup('unready');
  const missing = byGroup('missing');
  const values = new Map(ready.map((n) => [n, i.samples.get(n)!.value]));
  if (values.size === 0) throw new CalcError('did not receive metrics for targeted pods (pods might be unready)');
  const first = ratioOf(values, requests, i.target);
  const result = (replicas: number): CalcResult => ({ replicas, averageValue: first.average, ...(first.utilization !== undefined ? { utilization: first.utilization } : {}) });
  const scaleUpWithUnready = unready.length > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && missing.length === 0) {
    if (Math.abs(1 - first.ratio) <= tolerance) return result(i.currentReplicas);
    return result(Math.ceil(first.ratio * ready.length));
  }
  // Second pass: assume the worst of the pods we could not measure.
  if (first.ratio < 1) {
    for (const n of missing) {
      values.set(n, 'utilization' in i.target ? (requests.get(n)! * Math.max(100, i.target.utilization)) / 100 : i.target.averageValue);
    }
  } else if (first.ratio > 1) {
    for (const n of missing) values.set(n, 0);
  }
  if (scaleUpWithUnready) for (const n of unready) values.set(n, 0);
  const second = ratioOf(values, requests, i.target);
  if (Math.abs(1 - second.ratio) <= tolerance || (first.ratio < 1 && second.ratio > 1) || (first.ratio > 1 && second.ratio < 1)) return result(i.currentReplicas);
  const replicas = Math.ceil(second.ratio * values.size);
  if ((second.ratio < 1 && replicas > i.currentReplicas) || (second.ratio > 1 && replicas < i.currentReplicas)) return result(i.currentReplicas);
  return result(replicas);
}
