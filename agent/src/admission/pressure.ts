/**
 * Admission under node pressure (kubelet eviction manager's Admit): with no pressure condition
 * every pod is admitted; critical pods always are; under MemoryPressure alone a pod is admitted
 * unless it is BestEffort and does not tolerate the memory-pressure taint; under any other
 * pressure (DiskPressure, PIDPressure) no pod is. The refusal reads as kubelet's:
 * reason `Evicted`, "The node had condition: [DiskPressure]. " (Go's %v of the condition list,
 * trailing space included).
 */
import { podQOSClass, tolerationsTolerate, type Pod } from '@nodelet/api/agent';
import { EVICTED_REASON } from '../eviction/message.js';
import { isCriticalForEviction } from '../eviction/ranking.js';
import type { PressureCondition } from '../eviction/signals.js';
import { ADMIT, type PodAdmitHandler } from './admit.js';

/** The order kubelet lists them in (the order of its signal → condition table). */
const ORDER: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];
const MEMORY_PRESSURE_TAINT = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' } as const;

export function pressureAdmitHandler(conditions: () => ReadonlySet<PressureCondition>): PodAdmitHandler {
  return (pod: Pod) => {
    const now = conditions();
    if (now.size === 0 || isCriticalForEviction(pod)) return ADMIT;
    if (now.size === 1 && now.has('MemoryPressure')) {
      if (podQOSClass(pod.spec) !== 'BestEffort') return ADMIT;
      if (tolerationsTolerate(pod.spec?.tolerations ?? undefined, MEMORY_PRESSURE_TAINT)) return ADMIT;
    }
    const list = ORDER.filter((c) => now.has(c)).join(' ');
    return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${list}]. ` };
  };
}
