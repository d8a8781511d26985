/**
 * The cgroup settings of kubelet's pod and QoS-class cgroups (pkg/kubelet/cm helpers), as numbers:
 *
 *   pod cgroup      cpu shares from the pod's CPU requests (BestEffort: the minimum, 2); a CFS quota
 *                   from its CPU limits and a memory limit from its memory limits, each only when
 *                   every container (init ones included) sets that limit (Guaranteed always does);
 *                   pids from `podPidsLimit`; the pod's overhead is added to requests and limits
 *   burstable       cpu shares = the CPU requests of every Burstable pod on the node
 *   besteffort      cpu shares 2
 *
 * A pod's requests and limits are what it can use at once: the sum of its app containers and
 * sidecars, or more if one init container (plus the sidecars started before it) asks for more.
 * cgroup v2 has no shares: `cpu.weight` is derived from them by the OCI runtimes' formula.
 */
import type { Container, Pod } from '@nodelet/api/agent';
import { podQOSClass, type QOSClass } from '@nodelet/api/agent';
import { milliCpu, parseQuantity } from '../util/quantity.js';

/** kubelet MinShares / MaxShares and the CFS defaults. */
export const MIN_SHARES = 2;
export const MAX_SHARES = 262_144;
export const CPU_PERIOD_US = 100_000;
const MIN_QUOTA_US = 1000;

/** What one cgroup is set to; an absent field is left unlimited. */
export interface CgroupResources {
  cpuShares: number;
  cpuQuotaUs?: number;
  cpuPeriodUs?: number;
  memoryLimitBytes?: number;
  pidsLimit?: number;
}

/** Millicores → cpu shares (1 core = 1024), clamped to [2, 262144]. */
export function milliCpuToShares(milli: number): number {
  if (milli <= 0) return MIN_SHARES;
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((milli * 1024) / 1000)));
}

/** Millicores → CFS quota in µs per `periodUs`; 0 for no limit, at least 1 ms otherwise. */
export function milliCpuToQuota(milli: number, periodUs = CPU_PERIOD_US): number {
  if (milli <= 0) return 0;
  return Math.max(MIN_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/** cgroup v1 cpu.shares [2, 262144] → cgroup v2 cpu.weight [1, 10000] (the OCI runtimes' mapping). */
export function sharesToWeight(shares: number): number {
  if (shares <= 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

/** The cgroup name of a QoS class below `kubepods` ('' for Guaranteed: its pods sit in kubepods itself). */
export function qosDir(qos: QOSClass): string {
  return qos === 'Guaranteed' ? '' : qos.toLowerCase();
}

/** The pod cgroup, relative to the cgroup root: `kubepods/burstable/pod<uid>`, `kubepods/pod<uid>`. */
export function podCgroupPath(pod: Pod): string {
  const q = qosDir(podQOSClass(pod.spec));
  return ['kubepods', q, `pod${pod.metadata.uid}`].filter(Boolean).join('/');
}

type Amounts = { cpuMilli?: number; memory?: number };

function amounts(c: Container, which: 'requests' | 'limits'): Amounts {
  const r = c.resources ?? {};
  // A request left out defaults to the limit (API defaulting; static pods skip it).
  const src = which === 'limits' ? (r.limits ?? {}) : { ...(r.limits ?? {}), ...(r.requests ?? {}) };
  const out: Amounts = {};
  if (src.cpu !== undefined) out.cpuMilli = milliCpu(src.cpu);
  if (src.memory !== undefined) out.memory = parseQuantity(src.memory);
  return out;
}

/** The pod's effective requests or limits (app containers + sidecars vs. each init container's turn) + overhead. */
export function podAmounts(pod: Pod, which: 'requests' | 'limits'): Required<Amounts> {
  const spec = pod.spec;
  const total = { cpuMilli: 0, memory: 0 };
  const add = (to: Required<Amounts>, a: Amounts): void => {
    to.cpuMilli += a.cpuMilli ?? 0;
    to.memory += a.memory ?? 0;
  };
  const sidecars = { cpuMilli: 0, memory: 0 };
  const initPeak = { cpuMilli: 0, memory: 0 };
  for (const c of spec?.initContainers ?? []) {
    const a = amounts(c, which);
    if (c.restartPolicy === 'Always') {
      add(sidecars, a);
      continue;
    }
    initPeak.cpuMilli = Math.max(initPeak.cpuMilli, sidecars.cpuMilli + (a.cpuMilli ?? 0));
    initPeak.memory = Math.max(initPeak.memory, sidecars.memory + (a.memory ?? 0));
  }
  add(total, sidecars);
  for (const c of spec?.containers ?? []) add(total, amounts(c, which));
  total.cpuMilli = Math.max(total.cpuMilli, initPeak.cpuMilli);
  total.memory = Math.max(total.memory, initPeak.memory);
  const overhead = spec?.overhead;
  if (overhead) add(total, { ...(overhead.cpu !== undefined ? { cpuMilli: milliCpu(overhead.cpu) } : {}), ...(overhead.memory !== undefined ? { memory: parseQuantity(overhead.memory) } : {}) });
  return total;
}

/** The pod cgroup's settings (kubelet ResourceConfigForPod); `pidsLimit` ≤ 0 leaves pids unlimited. */
export function podCgroupResources(pod: Pod, pidsLimit: number): CgroupResources {
  const qos = podQOSClass(pod.spec);
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const out: CgroupResources = { cpuShares: MIN_SHARES };
  if (pidsLimit > 0) out.pidsLimit = pidsLimit;
  if (qos === 'BestEffort') return out;
  const req = podAmounts(pod, 'requests');
  const lim = podAmounts(pod, 'limits');
  out.cpuShares = milliCpuToShares(req.cpuMilli);
  if (all.every((c) => c.resources?.limits?.cpu !== undefined) && lim.cpuMilli > 0) {
    out.cpuQuotaUs = milliCpuToQuota(lim.cpuMilli);
    out.cpuPeriodUs = CPU_PERIOD_US;
  }
  if (all.every((c) => c.resources?.limits?.memory !== undefined) && lim.memory > 0) out.memoryLimitBytes = Math.floor(lim.memory);
  return out;
}

/** The QoS-class cgroups' cpu shares for the pods on the node (kubelet's QoS container manager). */
export function qosCgroupShares(pods: Iterable<Pod>): { burstable: number; besteffort: number } {
  let milli = 0;
  for (const p of pods) if (podQOSClass(p.spec) === 'Burstable') milli += podAmounts(p, 'requests').cpuMilli;
  return { burstable: milliCpuToShares(milli), besteffort: MIN_SHARES };
}
