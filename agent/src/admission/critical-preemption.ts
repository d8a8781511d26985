/**
 * Critical-pod admission (kubelet preemption.CriticalPodAdmissionHandler): a critical pod
 * (static, mirror, or at system-critical priority) that does not fit is not refused; the agent
 * evicts pods that it outranks until their requests cover the shortage, then admits it.
 *
 *   critical pod short of cpu 500m ─▶ candidates: running pods it outranks, split by QoS
 *       ─▶ Guaranteed pods needed if every BestEffort and Burstable pod went
 *       ─▶ Burstable pods needed if every BestEffort pod and those Guaranteed went
 *       ─▶ BestEffort pods needed after those
 *       ─▶ each: Warning event `Preempting`, killed with its own grace, Failed/Preempting
 *
 * Within a class the choice is greedy by "distance": the sum over the remaining shortages of
 * (shortage left after this pod / shortage)², so each resource weighs the same whatever its unit;
 * equal distances go to the pod with the smaller request (memory, then CPU). This keeps the number
 * of pods evicted small and spares the higher QoS classes, as kubelet does.
 *
 * Unlike kubelet, admission here cannot block while the victims stop: they are killed in the
 * background and the critical pod starts beside them (the node briefly runs both).
 */
import { podQOSClass, type Pod } from '@nodelet/api/agent';
import { describeError, type Logger } from '@nodelet/base';
import { isCriticalForEviction } from '../eviction/ranking.js';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import { markDisruptedByKubelet } from '../status/disruption-target.js';
import { ADMIT } from './admit.js';
import { requestUnits, type AdmissionFailureHandler, type InsufficientResource } from './resource-fit.js';

/** The victim's status message and event message (kubelet preemption.message). */
export const PREEMPTED_MESSAGE = 'Preempted in order to admit critical pod';
/** The victim's status reason and event reason (kubelet events.PreemptContainer). */
export const PREEMPTING_REASON = 'Preempting';
/** The DisruptionTarget condition's message on a victim. */
export const PREEMPTED_CONDITION_MESSAGE = 'Pod was preempted by Kubelet to accommodate a critical pod.';
/** The refusal when no set of pods frees enough (kubelet lifecycle.UnexpectedAdmissionError). */
export const UNEXPECTED_ADMISSION_ERROR = 'UnexpectedAdmissionError';

/** A shortage still to be freed, in kubelet's units. */
export interface Requirement {
  resource: string;
  quantity: number;
}

/** kubetypes.Preemptable: a critical pod outranks every pod that is not; otherwise strictly higher priority. */
export function preemptable(preemptor: Pod, preemptee: Pod): boolean {
  if (isCriticalForEviction(preemptor) && !isCriticalForEviction(preemptee)) return true;
  const a = preemptor.spec?.priority;
  const b = preemptee.spec?.priority;
  return a !== undefined && a !== null && b !== undefined && b !== null && a > b;
}

/** The requirements left if `pods` were gone; fully covered ones drop out. */
function subtract(reqs: readonly Requirement[], pods: readonly Pod[]): Requirement[] {
  const out: Requirement[] = [];
  for (const r of reqs) {
    let left = r.quantity;
    for (const p of pods) {
      left -= requestUnits(p, r.resource);
      if (left <= 0) break;
    }
    if (left > 0) out.push({ resource: r.resource, quantity: left });
  }
  return out;
}

function distance(reqs: readonly Requirement[], pod: Pod): number {
  let d = 0;
  for (const r of reqs) {
    const left = r.quantity - requestUnits(pod, r.resource);
    if (left > 0) d += (left / r.quantity) ** 2;
  }
  return d;
}

function smallerRequest(a: Pod, b: Pod): boolean {
  for (const res of ['memory', 'cpu']) {
    const x = requestUnits(a, res);
    const y = requestUnits(b, res);
    if (x !== y) return x < y;
  }
  return true;
}

/** kubelet's toString of a requirement list, which its error messages carry. */
export function formatRequirements(reqs: readonly Requirement[]): string {
  return `[${reqs.map((r) => `(res: ${r.resource}, q: ${r.quantity}), `).join('')}]`;
}

class NoVictimsError extends Error {
  constructor(reqs: readonly Requirement[]) {
    super(`no set of running pods found to reclaim resources: ${formatRequirements(reqs)}`);
  }
}

function byDistance(candidates: readonly Pod[], reqs: Requirement[]): Pod[] {
  const pods = [...candidates];
  const chosen: Pod[] = [];
  while (reqs.length > 0) {
    if (pods.length === 0) throw new NoVictimsError(reqs);
    let best = 0;
    let bestDist = reqs.length + 1; // one requirement contributes at most 1
    pods.forEach((p, i) => {
      const d = distance(reqs, p);
      if (d < bestDist || (d === bestDist && smallerRequest(p, pods[best]!))) {
        bestDist = d;
        best = i;
      }
    });
    const [victim] = pods.splice(best, 1);
    chosen.push(victim!);
    reqs = subtract(reqs, [victim!]);
  }
  return chosen;
}

/**
 * The pods to evict so that `preemptor` gets `reqs` (kubelet getPodsToPreempt), BestEffort ones
 * first in the result. Throws with kubelet's message when even all candidates are not enough.
 */
export function podsToPreempt(preemptor: Pod, running: readonly Pod[], reqs: readonly Requirement[]): Pod[] {
  const byQos: Record<'BestEffort' | 'Burstable' | 'Guaranteed', Pod[]> = { BestEffort: [], Burstable: [], Guaranteed: [] };
  for (const p of running) if (preemptable(preemptor, p)) byQos[podQOSClass(p.spec)].push(p);
  const { BestEffort: be, Burstable: bu, Guaranteed: gu } = byQos;
  const unmet = subtract(reqs, [...be, ...bu, ...gu]);
  if (unmet.length > 0) throw new NoVictimsError(unmet);
  const guaranteed = byDistance(gu, subtract(reqs, [...be, ...bu]));
  const burstable = byDistance(bu, subtract(reqs, [...be, ...guaranteed]));
  const bestEffort = byDistance(be, subtract(reqs, [...burstable, ...guaranteed]));
  return [...bestEffort, ...burstable, ...guaranteed];
}

/** The status edit of a preempted pod: Failed/Preempting and the DisruptionTarget condition. */
export function preemptedStatus(now: () => number): PodStatusFn {
  return (status) => markDisruptedByKubelet(status, { reason: PREEMPTING_REASON, message: PREEMPTED_MESSAGE, conditionMessage: PREEMPTED_CONDITION_MESSAGE, now: now() });
}

export interface CriticalPodAdmissionOptions {
  /** The pods the node runs and has not started stopping (candidates). */
  activePods: () => Pod[];
  /** Stops a pod with its status edit; resolves when stopped (PodWorkers.kill). */
  killPod: (pod: Pod, gracePeriodS: number, statusFn: PodStatusFn) => Promise<void>;
  podEvent: (pod: Pod, type: 'Warning', reason: string, message: string) => void;
  now: () => number;
  log: Logger;
}

/** The failure handler for {@link resourceFitAdmitHandler}: recovers only for critical pods. */
export function criticalPodAdmissionHandler(o: CriticalPodAdmissionOptions): AdmissionFailureHandler {
  return (pod, short: readonly InsufficientResource[]) => {
    if (!isCriticalForEviction(pod)) return undefined;
    // The amount missing: requested minus what is free (kubelet GetInsufficientAmount).
    const reqs = short.map((s) => ({ resource: s.resource, quantity: s.requested - (s.capacity - s.used) }));
    let victims: Pod[];
    try {
      victims = podsToPreempt(pod, o.activePods(), reqs);
    } catch (err) {
      if (!(err instanceof NoVictimsError)) throw err;
      const message = `Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: ${err.message}`;
      return { admit: false, reason: UNEXPECTED_ADMISSION_ERROR, message };
    }
    const name = (p: Pod): string => `${p.metadata.namespace}/${p.metadata.name}`;
    o.log.info({ pod: name(pod), victims: victims.map(name), insufficient: formatRequirements(reqs) }, 'Evicting pods to admit a critical pod');
    for (const v of victims) {
      o.podEvent(v, 'Warning', PREEMPTING_REASON, PREEMPTED_MESSAGE);
      const grace = v.spec?.terminationGracePeriodSeconds ?? 30;
      void o.killPod(v, grace, preemptedStatus(o.now)).catch((err: unknown) => o.log.warn({ pod: name(v), err: describeError(err) }, 'Preempting a pod failed'));
    }
    return ADMIT;
  };
}
