/**
 * Which nodes a DaemonSet's pod belongs on (upstream daemon_controller NodeShouldRunDaemonPod and
 * util/daemonset_util.go), and the pod it creates there. Pure.
 *
 * The pod gets the tolerations the controller always adds, so a daemon keeps running on a node
 * that is not ready, unreachable, under pressure or cordoned, and is pinned to its node with a
 * required node affinity on `metadata.name` (the scheduler still binds it).
 */
import { tolerationsTolerate, type DaemonSet, type Node, type Pod, type PodSpec, type Toleration } from '@nodelet/api';
import { podMatchesNodeSelectorAndAffinity } from '../../scheduler/filters.js';
import { newControllerRef } from '../util/pods.js';
import { CONTROLLER_REVISION_HASH_LABEL } from '../util/history.js';

export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** Upstream AddOrUpdateDaemonPodTolerations (network-unavailable only for hostNetwork pods). */
export function daemonPodTolerations(spec: PodSpec | undefined): Toleration[] {
  const out = [...(spec?.tolerations ?? [])];
  const add = (key: string, effect: 'NoSchedule' | 'NoExecute'): void => {
    if (!out.some((t) => t.key === key && t.operator === 'Exists' && t.effect === effect)) out.push({ key, operator: 'Exists', effect });
  };
  add('node.kubernetes.io/not-ready', 'NoExecute');
  add('node.kubernetes.io/unreachable', 'NoExecute');
  add('node.kubernetes.io/disk-pressure', 'NoSchedule');
  add('node.kubernetes.io/memory-pressure', 'NoSchedule');
  add('node.kubernetes.io/pid-pressure', 'NoSchedule');
  add('node.kubernetes.io/unschedulable', 'NoSchedule');
  if (spec?.hostNetwork) add('node.kubernetes.io/network-unavailable', 'NoSchedule');
  return out;
}

export interface Eligibility {
  /** A daemon pod should be created here. */
  shouldRun: boolean;
  /** An existing daemon pod may stay (false: a NoExecute taint it does not tolerate, or it no longer matches). */
  shouldContinueRunning: boolean;
}

export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): Eligibility {
  const spec = ds.spec?.template?.spec;
  if (spec?.nodeName && spec.nodeName !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  const pod: Pod = { metadata: { labels: ds.spec?.template?.metadata?.labels }, spec: { ...(spec ?? { containers: [] }), nodeName: node.metadata.name, tolerations: daemonPodTolerations(spec) } };
  if (!podMatchesNodeSelectorAndAffinity(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const untolerated = (node.spec?.taints ?? []).filter((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerationsTolerate(pod.spec!.tolerations, t));
  if (untolerated.length === 0) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: !untolerated.some((t) => t.effect === 'NoExecute') };
}

/** The node a daemon pod is for: its nodeName, else the `metadata.name` its required affinity pins (upstream GetTargetNodeName). */
export function targetNodeName(p: Pod): string | undefined {
  if (p.spec?.nodeName) return p.spec.nodeName;
  for (const term of p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of term.matchFields ?? []) if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  }
  return undefined;
}

/** A new daemon pod for `node`: template + hash and generation labels + tolerations + affinity pinned to the node. */
export function daemonPodFor(ds: DaemonSet, nodeName: string, hash: string, templateGeneration: string | undefined): Pod {
  const t = ds.spec!.template;
  const spec: PodSpec = structuredClone(t.spec ?? { containers: [] });
  spec.tolerations = daemonPodTolerations(t.spec);
  const affinity = (spec.affinity ??= {});
  const nodeAffinity = (affinity.nodeAffinity ??= {});
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] };
  const labels: Record<string, string> = { ...(t.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash };
  if (templateGeneration) labels[POD_TEMPLATE_GENERATION_LABEL] = templateGeneration;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace,
      labels,
      annotations: t.metadata?.annotations ? { ...t.metadata.annotations } : undefined,
      ownerReferences: [newControllerRef(ds, 'apps/v1', 'DaemonSet')],
    },
    spec,
  };
}

/** Upstream IsPodUpdated: the pod runs the current template (by hash, or by the legacy generation label). */
export function isPodUpdated(p: Pod, hash: string, templateGeneration: string | undefined): boolean {
  const labels = p.metadata.labels ?? {};
  return labels[CONTROLLER_REVISION_HASH_LABEL] === hash || (templateGeneration !== undefined && labels[POD_TEMPLATE_GENERATION_LABEL] === templateGeneration);
}
