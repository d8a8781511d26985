/**
 * The placement rules of bench/density's `--workload spread` and the check that the scheduler kept
 * them: pure, so the check itself is unit-tested (placement.test.ts).
 */
import type { Pod } from '@nodelet/api';

/** `plain`: bare pods. `spread`: Deployments alternate topology spread and required anti-affinity. */
export type Workload = 'plain' | 'spread';

const HOSTNAME = 'kubernetes.io/hostname';

/**
 * The pod-spec fields Deployment `index` (named `name`) gets: for `spread`, even indexes a
 * topology spread constraint (maxSkew 1 on the hostname, DoNotSchedule), odd ones required pod
 * anti-affinity on the hostname; nothing for `plain`.
 */
export function placement(workload: Workload, name: string, index: number): Partial<NonNullable<Pod['spec']>> {
  if (workload === 'plain') return {};
  const labelSelector = { matchLabels: { app: name } };
  return index % 2 === 0
    ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: HOSTNAME, whenUnsatisfiable: 'DoNotSchedule', labelSelector }] }
    : { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: HOSTNAME, labelSelector }] } } };
}

/**
 * How many of Deployments `d0`…`d<deployments-1>` have bound pods that break the rule `placement`
 * gave them: a spread one whose per-node counts (nodes without a pod count as 0) differ by more
 * than 1, an anti-affine one with two pods on a node. Always 0 for `plain`.
 */
export function placementViolations(workload: Workload, deployments: number, nodes: string[], pods: Pod[]): number {
  if (workload === 'plain') return 0;
  let bad = 0;
  for (let i = 0; i < deployments; i++) {
    const perNode = new Map(nodes.map((n) => [n, 0]));
    for (const p of pods) if (p.metadata.labels?.app === `d${i}` && p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    const counts = [...perNode.values()];
    if (i % 2 === 0 ? Math.max(...counts) - Math.min(...counts) > 1 : Math.max(...counts) > 1) bad++;
  }
  return bad;
}
