// A scheduler cache filled with nodes and bound pods, and the cluster-wide plugins over it, for plugin tests.
import type { Namespace, Node, Pod } from '@nodelet/api';
import { FakeClock } from '@nodelet/base/testing';
import { schedulePod, type ScheduleResult } from '../algorithm.js';
import { SchedulerCache } from '../cache.js';
import type { NamespaceLookup } from '../cluster-view.js';
import { DEFAULT_FILTERS, newPodContext, runFilters, type FilterPlugin } from '../filters.js';
import { imageLocalityScore } from '../image-locality.js';
import { interPodAffinityFilter, interPodAffinityScore } from '../inter-pod-affinity.js';
import { newPodInfo } from '../pod-info.js';
import type { ScorePlugin } from '../scores.js';
import { podTopologySpreadFilter, podTopologySpreadScore } from '../topology-spread.js';
import { WorkloadSelectors } from '../workload-selectors.js';

export interface TestCluster {
  cache: SchedulerCache;
  namespaces: Map<string, Record<string, string>>;
  workloads: WorkloadSelectors;
  filters: FilterPlugin[];
  scorers: ScorePlugin[];
  /** Schedules `pod` over every node (percentageOfNodesToScore 100), ties broken towards the first. */
  schedule(pod: Pod): ScheduleResult;
  /** The nodes every filter accepts for `pod` (PreFilter run first). */
  feasible(pod: Pod): string[];
  /** Binds `pod` to `node` in the cache, as the informer would report it. */
  bind(pod: Pod, node: string): void;
}

export function testCluster(nodes: Node[], pods: Pod[] = [], namespaces: Namespace[] = []): TestCluster {
  const cache = new SchedulerCache({ clock: new FakeClock(), assumedPodTtlMs: 0 });
  for (const n of nodes) cache.addOrUpdateNode(n);
  for (const p of pods) cache.addOrUpdatePod(newPodInfo(p));
  const nsLabels = new Map(namespaces.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));
  const lookup: NamespaceLookup = { labels: (ns) => nsLabels.get(ns), all: () => nsLabels.entries() };
  const workloads = new WorkloadSelectors();
  const filters = [...DEFAULT_FILTERS, podTopologySpreadFilter(cache), interPodAffinityFilter(cache, lookup)];
  const scorers = [interPodAffinityScore(cache, lookup), podTopologySpreadScore(cache, workloads), imageLocalityScore(cache)];
  return {
    cache,
    namespaces: nsLabels,
    workloads,
    filters,
    scorers,
    schedule: (pod) => schedulePod(pod, cache, { filters, scorers, percentageOfNodesToScore: 100, random: () => 0.99 }),
    feasible(pod) {
      const ctx = newPodContext(pod);
      for (const f of filters) f.preFilter?.(ctx);
      return cache.list.filter((n) => runFilters(ctx, n, filters) === undefined).map((n) => n.name);
    },
    bind: (pod, node) => cache.addOrUpdatePod(newPodInfo({ ...pod, spec: { ...pod.spec!, nodeName: node } })),
  };
}
