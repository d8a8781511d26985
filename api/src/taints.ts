/**
 * Taints and tolerations (core/v1 helpers), shared by the scheduler's TaintToleration filter and
 * score, the DaemonSet controller's eligibility and the node lifecycle controller's NoExecute
 * eviction, so they cannot disagree about which pod tolerates which taint.
 */
import type { Taint, Toleration } from './types/index.js';

/** What a toleration is matched against: a node's taint, or one the caller is about to add. */
export type TaintRef = Pick<Taint, 'key' | 'value' | 'effect'>;

/**
 * core/v1 `Toleration.ToleratesTaint`: an empty effect matches every effect; an empty key
 * tolerates every taint only with operator Exists; an empty operator means Equal.
 */
export function toleratesTaint(t: Toleration, taint: TaintRef): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (!t.key && t.operator !== 'Exists') return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** True when any of `tolerations` tolerates `taint`. */
export function tolerationsTolerate(tolerations: readonly Toleration[] | undefined, taint: TaintRef): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}
