/**
 * A pod's quality-of-service class (core/v1 qos GetPodQOS), shared by the API server, which sets
 * status.qosClass at create, and the agent, which reports it and admits and evicts by it, so the
 * two cannot disagree. Only CPU and memory decide: ephemeral-storage or extended resources alone
 * leave a pod BestEffort; Guaranteed needs CPU and memory limits on every container, with requests
 * (defaulted to the limits) equal to them.
 */
import type { PodSpec } from './types/index.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

type Resources = Record<string, unknown> | null | undefined;

export function podQOSClass(spec: Pick<PodSpec, 'containers' | 'initContainers'> | undefined): QOSClass {
  const cs = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  const counts = (m: Resources): boolean => !!m && (m.cpu !== undefined || m.memory !== undefined);
  if (!cs.some((c) => counts(c.resources?.requests) || counts(c.resources?.limits))) return 'BestEffort';
  const guaranteed = cs.every((c) => {
    const l = c.resources?.limits ?? {};
    const r = c.resources?.requests ?? {};
    return l.cpu !== undefined && l.memory !== undefined && (r.cpu ?? l.cpu) === l.cpu && (r.memory ?? l.memory) === l.memory;
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
