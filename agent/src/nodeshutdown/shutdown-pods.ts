/**
 * What a node shutdown does to pods (kubelet nodeshutdown_manager_linux.go, processShutdownEvent):
 * two groups by priority, regular pods first, then critical pods; each group's pods are stopped
 * together with their grace capped at the group's share, and the next group starts when all of
 * them stopped or the share ran out, whichever is first.
 *
 *   shutdownGracePeriod = 30s, shutdownGracePeriodCriticalPods = 10s
 *   t=0 ──── regular pods (grace ≤ 20s) ────▶ t≤20 ── critical pods (grace ≤ 10s) ──▶ t≤30 → release lock
 */
import type { Pod, PodStatus } from '@nodelet/api/agent';
import type { Clock, Logger } from '@nodelet/base';
import type { PodStatusFn } from '../kubecontainer/pod-update.js';
import { markDisruptedByKubelet } from '../status/disruption-target.js';

/** kubelet's nodeShutdownReason / nodeShutdownMessage: clients (Job pod failure policies) match on them. */
export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
/** The priority of system-cluster-critical; system-node-critical is above it (scheduling.SystemCriticalPriority). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
const CRITICAL_CLASSES: ReadonlySet<string> = new Set(['system-node-critical', 'system-cluster-critical']);

export interface ShutdownGroup {
  /** Who belongs here, for logs. */
  name: 'regular' | 'critical';
  /** The group's share of shutdownGracePeriod, whole seconds (kubelet truncates the same way). */
  gracePeriodS: number;
  pods: Pod[];
}

/** A critical pod: priority at or above system-cluster-critical, or one of the two system classes by name. */
export function isCriticalPod(pod: Pod): boolean {
  const s = pod.spec;
  return (s?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY || CRITICAL_CLASSES.has(s?.priorityClassName ?? '');
}

/** Splits pods into the regular group then the critical group (kubelet migrateConfig + groupByPriority). */
export function shutdownGroups(pods: readonly Pod[], gracePeriodMs: number, criticalGracePeriodMs: number): ShutdownGroup[] {
  const regular: Pod[] = [];
  const critical: Pod[] = [];
  for (const p of pods) (isCriticalPod(p) ? critical : regular).push(p);
  return [
    { name: 'regular', gracePeriodS: Math.floor((gracePeriodMs - criticalGracePeriodMs) / 1000), pods: regular },
    { name: 'critical', gracePeriodS: Math.floor(criticalGracePeriodMs / 1000), pods: critical },
  ];
}

/** The pod's own terminationGracePeriodSeconds when it is shorter than the group's share. */
export function podGracePeriodS(pod: Pod, groupS: number): number {
  const own = pod.spec?.terminationGracePeriodSeconds;
  return own !== undefined && own !== null && own <= groupS ? own : groupS;
}

/** Failed (unless it already succeeded), reason Terminated, and the DisruptionTarget condition. */
export function nodeShutdownStatus(now: () => number): PodStatusFn {
  return (status: PodStatus) => markDisruptedByKubelet(status, { reason: NODE_SHUTDOWN_REASON, message: NODE_SHUTDOWN_MESSAGE, now: now(), keepSucceeded: true });
}

export interface StopPodsOptions {
  groups: ShutdownGroup[];
  /** Stops one pod; resolves when its containers are stopped (PodWorkers.kill). */
  killPod(pod: Pod, gracePeriodS: number, statusFn: PodStatusFn): Promise<void>;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
}

/**
 * Stops the groups in order. A group whose pods outlive its share is left to finish on its own
 * while the next group starts, as in kubelet: the shutdown must not wait past its budget.
 */
export async function stopPodsForShutdown(o: StopPodsOptions): Promise<void> {
  const statusFn = nodeShutdownStatus(() => o.clock.now());
  for (const g of o.groups) {
    if (g.pods.length === 0) continue; // an empty group costs no time
    o.log.info({ group: g.name, pods: g.pods.length, gracePeriodS: g.gracePeriodS }, 'Stopping pods for node shutdown');
    const all = Promise.all(
      g.pods.map((pod) => {
        const grace = podGracePeriodS(pod, g.gracePeriodS);
        const name = `${pod.metadata.namespace}/${pod.metadata.name}`;
        return o.killPod(pod, grace, statusFn).then(
          () => o.log.info({ pod: name, gracePeriodS: grace }, 'Pod stopped for node shutdown'),
          (err: unknown) => o.log.warn({ pod: name, err: String(err) }, 'Pod not stopped for node shutdown'),
        );
      }),
    ).then(() => true);
    const timer = new AbortController();
    const onAbort = (): void => timer.abort();
    o.signal.addEventListener('abort', onAbort, { once: true });
    const out = o.clock.sleep(g.gracePeriodS * 1000, timer.signal).then(() => false, () => false);
    try {
      const done = await Promise.race([all, out]);
      if (!done && !o.signal.aborted) o.log.warn({ group: g.name, gracePeriodS: g.gracePeriodS }, 'Node shutdown grace period of a pod group ran out');
    } finally {
      timer.abort();
      o.signal.removeEventListener('abort', onAbort);
    }
    if (o.signal.aborted) return;
  }
}
