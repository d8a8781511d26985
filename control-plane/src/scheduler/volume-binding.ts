/**
 * The VolumeBinding filter (kube-scheduler's VolumeBinding plugin, for the volume kinds nodelet
 * has): a pod's PersistentVolumeClaims decide where it may run.
 *
 *   claim missing / being deleted     no node fits: `persistentvolumeclaim "x" not found` / `… is being deleted`
 *   claim bound to a PV               the PV's required node affinity must match the node
 *                                     (`node(s) had volume node affinity conflict`)
 *   claim unbound, WaitForFirstConsumer  any node: once a node is chosen, the scheduler writes
 *                                     `volume.kubernetes.io/selected-node` on the claim (PreBind) and
 *                                     binds the pod only after the claim is Bound (provisioned there)
 *   claim unbound, Immediate          `pod has unbound immediate PersistentVolumeClaims`
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '@nodelet/api';
import { nodeSelectorTermMatches, type FilterPlugin, type FilterStatus, type PodContext } from './filters.js';

export const REASON_VOLUME_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';

export interface VolumeLookup {
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  storageClass(name: string): StorageClass | undefined;
}

export interface PodVolumes {
  /** Set when no node can fit (a missing or deleting claim, an unbound Immediate claim). */
  unresolvable?: string;
  /** PVs the pod's bound claims use. */
  bound: PersistentVolume[];
  /** Unbound claims that wait for this pod's node (WaitForFirstConsumer). */
  delayed: PersistentVolumeClaim[];
}

/** PreFilter: the pod's claims, looked up once per scheduling attempt. */
export function podVolumes(pod: Pod, lookup: VolumeLookup): PodVolumes {
  const out: PodVolumes = { bound: [], delayed: [] };
  const ns = pod.metadata.namespace ?? 'default';
  for (const v of pod.spec?.volumes ?? []) {
    const name = v.persistentVolumeClaim?.claimName;
    if (!name) continue;
    const pvc = lookup.claim(ns, name);
    if (!pvc) return { ...out, unresolvable: `persistentvolumeclaim "${name}" not found` };
    if (pvc.metadata.deletionTimestamp) return { ...out, unresolvable: `persistentvolumeclaim "${name}" is being deleted` };
    const pvName = pvc.spec?.volumeName;
    if (pvName) {
      const pv = lookup.volume(pvName);
      if (!pv) return { ...out, unresolvable: `persistentvolume "${pvName}" not found` };
      out.bound.push(pv);
      continue;
    }
    const cls = pvc.spec?.storageClassName ? lookup.storageClass(pvc.spec.storageClassName) : undefined;
    if (cls?.volumeBindingMode !== 'WaitForFirstConsumer') return { ...out, unresolvable: REASON_UNBOUND_IMMEDIATE };
    out.delayed.push(pvc);
  }
  return out;
}

/** The filter plugin over `lookup`; per-pod results are computed once per scheduling context. */
export function volumeBindingFilter(lookup: VolumeLookup): FilterPlugin {
  const cache = new WeakMap<PodContext, PodVolumes>();
  return {
    name: 'VolumeBinding',
    filter(ctx, info): FilterStatus | undefined {
      if (!(ctx.pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim)) return undefined;
      let vols = cache.get(ctx);
      if (!vols) cache.set(ctx, (vols = podVolumes(ctx.pod, lookup)));
      if (vols.unresolvable) return { plugin: 'VolumeBinding', code: 'UnschedulableAndUnresolvable', reasons: [vols.unresolvable] };
      for (const pv of vols.bound) {
        const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
        if (terms && !terms.some((t) => nodeSelectorTermMatches(t, info.node))) {
          return { plugin: 'VolumeBinding', code: 'UnschedulableAndUnresolvable', reasons: [REASON_VOLUME_NODE_CONFLICT] };
        }
      }
      return undefined;
    },
  };
}
