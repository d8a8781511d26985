/**
 * The pure rules of the node lifecycle controller (upstream `node_lifecycle_controller.go` and the
 * NoExecute taint manager):
 *
 *   Lease/heartbeat seen ──(no renewal for 50 s)──▶ Ready=Unknown "NodeStatusUnknown"
 *                                                   + taints unreachable:NoSchedule, unreachable:NoExecute
 *   Ready=False (agent says so) ───────────────────▶ taints not-ready:NoSchedule, not-ready:NoExecute
 *   Ready=True again ──────────────────────────────▶ those taints removed
 *   MemoryPressure/DiskPressure/PIDPressure=True ──▶ taint memory-|disk-|pid-pressure:NoSchedule
 *                                                    (taint-by-condition), removed when False
 *   NoExecute taint on the node ──▶ pods that do not tolerate it are deleted; pods that tolerate
 *   it for tolerationSeconds are deleted that long after the taint's timeAdded (300 s by default).
 */
import { toleratesTaint, type Node, type NodeCondition, type Pod, type Taint } from '@nodelet/api';

export const NODE_MONITOR_GRACE_MS = 50_000;
export const DEFAULT_TOLERATION_SECONDS = 300;
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
/** Upstream's taint-by-condition map (node_lifecycle_controller.go nodeConditionToTaintKeyStatusMap): condition True → NoSchedule taint. */
const PRESSURE_TAINTS: ReadonlyArray<[condition: string, key: string]> = [
  ['MemoryPressure', 'node.kubernetes.io/memory-pressure'],
  ['DiskPressure', 'node.kubernetes.io/disk-pressure'],
  ['PIDPressure', 'node.kubernetes.io/pid-pressure'],
];
/** Conditions the kubelet reports that go Unknown when it stops reporting. */
const MONITORED = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

export function readyCondition(node: Node): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

/**
 * Conditions after the grace period elapsed without a heartbeat: every monitored condition set
 * to Unknown (heartbeat kept, transition time now), as upstream's tryUpdateNodeHealth does.
 * Returns undefined when nothing changes (already Unknown).
 */
export function unknownConditions(node: Node, now: string): NodeCondition[] | undefined {
  const conds = structuredClone(node.status?.conditions ?? []);
  let changed = false;
  for (const type of MONITORED) {
    const c = conds.find((x) => x.type === type);
    if (!c) {
      conds.push({ type, status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: now, lastTransitionTime: now });
      changed = true;
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = 'NodeStatusUnknown';
      c.message = 'Kubelet stopped posting node status.';
      c.lastTransitionTime = now;
      changed = true;
    }
  }
  return changed ? conds : undefined;
}

/** The controller-owned taints a node should carry for its Ready and pressure conditions. */
export function conditionTaints(node: Node): Array<Pick<Taint, 'key' | 'effect'>> {
  const ready = readyCondition(node)?.status;
  const out: Array<Pick<Taint, 'key' | 'effect'>> = [];
  if (ready === 'Unknown') out.push({ key: TAINT_UNREACHABLE, effect: 'NoSchedule' }, { key: TAINT_UNREACHABLE, effect: 'NoExecute' });
  if (ready === 'False') out.push({ key: TAINT_NOT_READY, effect: 'NoSchedule' }, { key: TAINT_NOT_READY, effect: 'NoExecute' });
  for (const [type, key] of PRESSURE_TAINTS) {
    if (node.status?.conditions?.some((c) => c.type === type && c.status === 'True')) out.push({ key, effect: 'NoSchedule' });
  }
  return out;
}

/** Taints whose pods get the default 300 s NoExecute toleration. */
const OWNED = new Set([TAINT_UNREACHABLE, TAINT_NOT_READY]);
/** Taints this controller adds and removes; any other taint is the user's and stays. */
const RECONCILED = new Set([...OWNED, ...PRESSURE_TAINTS.map(([, key]) => key)]);

/** The node's taints with the controller-owned ones reconciled; undefined when already right. */
export function reconcileTaints(node: Node, now: string): Taint[] | undefined {
  const current = node.spec?.taints ?? [];
  const want = conditionTaints(node);
  const same = (t: Pick<Taint, 'key' | 'effect'>, u: Pick<Taint, 'key' | 'effect'>): boolean => t.key === u.key && t.effect === u.effect;
  const kept = current.filter((t) => !RECONCILED.has(t.key) || want.some((w) => same(w, t)));
  const added = want.filter((w) => !current.some((t) => same(t, w))).map((w) => ({ ...w, timeAdded: now }) as Taint);
  if (added.length === 0 && kept.length === current.length) return undefined;
  return [...kept, ...added];
}

export interface EvictionDecision {
  /** Pods to delete now. */
  evict: Pod[];
  /** When the next toleration expires (ms since epoch), to re-check then. */
  nextAt?: number;
}

/**
 * NoExecute eviction for the pods of one node. A pod without any toleration for the
 * not-ready/unreachable taints is treated as if the API server had added the default 300 s
 * tolerations (DefaultTolerationSeconds admission), so it is not evicted instantly.
 */
export function planEvictions(node: Node, pods: readonly Pod[], nowMs: number): EvictionDecision {
  const taints = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
  const out: EvictionDecision = { evict: [] };
  if (taints.length === 0) return out;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    let deadline = Infinity;
    let untolerated = false;
    for (const taint of taints) {
      let tols = (pod.spec?.tolerations ?? []).filter((t) => toleratesTaint(t, taint));
      if (tols.length === 0 && OWNED.has(taint.key)) tols = [{ key: taint.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS }];
      if (tols.length === 0) {
        untolerated = true;
        break;
      }
      // The shortest tolerationSeconds wins; a toleration without seconds tolerates forever.
      const secs = Math.min(...tols.map((t) => (t.tolerationSeconds === undefined ? Infinity : Math.max(0, t.tolerationSeconds))));
      if (secs === Infinity) continue;
      const added = Date.parse(taint.timeAdded ?? '') || nowMs;
      deadline = Math.min(deadline, added + secs * 1000);
    }
    if (untolerated || deadline <= nowMs) out.evict.push(pod);
    else if (deadline !== Infinity) out.nextAt = Math.min(out.nextAt ?? Infinity, deadline);
  }
  return out;
}
