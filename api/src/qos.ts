/**
 * A pod's quality-of-service class (core/v1 qos GetPodQOS), shared by the API server, which sets
 * status.qosClass at create, and the agent, which reports it and admits and evicts by it, so the
 * two cannot disagree. Only CPU and memory decide: ephemeral-storage or extended resources alone
 * leave a pod BestEffort; Guaranteed needs CPU and memory limits on every container, with requests
 * (defaulted to the limits) equal to them.
 */
import type { PodSpec } from './types/index.js';
import { parseQuantityMilli } from './quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

type Resources = Record<string, unknown> | null | undefined;

export function podQOSClass(spec: Pick<PodSpec, 'containers' | 'initContainers'> | undefined): QOSClass {
  const cs = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  const counts = (m: Resources): boolean => !!m && (m.cpu !== undefined || m.memory !== undefined);
  if (!cs.some((c) => counts(c.resources?.requests) || counts(c.resources?.limits))) return 'BestEffort';
  const guaranteed = cs.every((c) => {
    const l = c.resources?.limits ?? {};
    const r = c.resources?.requests ?? {};
    return l.cpu !== undefined && l.memory !== undefined && sameQuantity(r.cpu ?? l.cpu, l.cpu) && sameQuantity(r.memory ?? l.memory, l.memory);
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * Equal as amounts, as upstream's Quantity.Cmp compares them: `"1"` and `"1000m"`, `"1Gi"` and
 * `"1073741824"` are the same. A malformed value (validation refuses those before a pod is stored)
 * falls back to comparing the text so this never throws.
 */
function sameQuantity(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return parseQuantityMilli(String(a)) === parseQuantityMilli(String(b));
  } catch {
    return false;
  }
}
