/**
 * The last two points of every node and container, and the usage computed from them, as
 * metrics-server does: CPU is the rate between the two cumulative samples (core-nanoseconds over
 * their measurement times), memory is the latest working set, the window is the time between the
 * samples and the timestamp is the latest sample's.
 *
 *   store(node, scrape) ─▶ per node and per container: a newer point pushes the current one to
 *                          `prev`; the same point again changes nothing; an older one (the node's
 *                          clock went back) starts over
 *   node(name) / pod(ns, name) ─▶ usage, or undefined until two points exist
 *
 * No rate is made across a counter that went down or a container that restarted (its start time
 * changed); a pod has metrics only when every container of it that the node reports has them, so a
 * pod is never shown with part of its usage. A node whose scrape failed is forgotten: stale numbers
 * would look current.
 */
import { type NodeScrape, type ResourcePoint } from './resource-scrape.js';

export interface Usage {
  /** Time of the latest sample, epoch ms. */
  timeMs: number;
  /** Between the two samples the rate is computed from, ms. */
  windowMs: number;
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface PodUsage {
  timeMs: number;
  windowMs: number;
  containers: Array<{ name: string; cpuNanoCores: number; memoryBytes: number }>;
}

interface Pair {
  prev?: ResourcePoint;
  cur: ResourcePoint;
}

interface NodeEntry {
  node?: Pair;
  containers: Map<string, Pair & { namespace: string; pod: string; container: string }>;
}

function advance(pair: Pair | undefined, p: ResourcePoint): Pair {
  if (!pair || p.timeMs < pair.cur.timeMs) return { cur: p };
  if (p.timeMs === pair.cur.timeMs) return pair;
  return { prev: pair.cur, cur: p };
}

/** The usage of a pair, or undefined without two points or across a reset. */
function usageOf(pair: Pair | undefined): Usage | undefined {
  const prev = pair?.prev;
  if (!pair || !prev) return undefined;
  const cur = pair.cur;
  const windowMs = cur.timeMs - prev.timeMs;
  if (windowMs <= 0 || cur.cpuNs < prev.cpuNs || cur.startMs !== prev.startMs) return undefined;
  return { timeMs: cur.timeMs, windowMs, cpuNanoCores: Math.round(((cur.cpuNs - prev.cpuNs) / windowMs) * 1e3), memoryBytes: cur.memoryBytes };
}

export class MetricsStore {
  readonly #nodes = new Map<string, NodeEntry>();
  /** `namespace/pod` → the keys of its containers, rebuilt on every store. */
  #pods = new Map<string, Array<{ node: string; key: string }>>();

  /** Records a node's scrape. */
  store(nodeName: string, scrape: NodeScrape): void {
    const old = this.#nodes.get(nodeName);
    const entry: NodeEntry = { node: scrape.node ? advance(old?.node, scrape.node) : undefined, containers: new Map() };
    for (const [key, p] of scrape.containers) {
      const pair = advance(old?.containers.get(key), p);
      entry.containers.set(key, { ...pair, namespace: p.namespace, pod: p.pod, container: p.container });
    }
    this.#nodes.set(nodeName, entry);
    this.#reindex();
  }

  /** Forgets a node (its scrape failed, or it is gone). */
  forget(nodeName: string): void {
    if (this.#nodes.delete(nodeName)) this.#reindex();
  }

  /** The names of the nodes it holds anything of. */
  nodeNames(): string[] {
    return [...this.#nodes.keys()];
  }

  node(name: string): Usage | undefined {
    return usageOf(this.#nodes.get(name)?.node);
  }

  pod(namespace: string, name: string): PodUsage | undefined {
    const refs = this.#pods.get(`${namespace}/${name}`);
    if (!refs?.length) return undefined;
    const containers: PodUsage['containers'] = [];
    let timeMs = 0;
    let windowMs = 0;
    for (const ref of refs) {
      const pair = this.#nodes.get(ref.node)?.containers.get(ref.key);
      const u = usageOf(pair);
      if (!pair || !u) return undefined;
      containers.push({ name: pair.container, cpuNanoCores: u.cpuNanoCores, memoryBytes: u.memoryBytes });
      if (u.timeMs > timeMs) [timeMs, windowMs] = [u.timeMs, u.windowMs];
    }
    containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { timeMs, windowMs, containers };
  }

  #reindex(): void {
    const pods = new Map<string, Array<{ node: string; key: string }>>();
    for (const [node, entry] of this.#nodes) {
      for (const [key, c] of entry.containers) {
        const podKey = `${c.namespace}/${c.pod}`;
        const list = pods.get(podKey) ?? [];
        list.push({ node, key });
        pods.set(podKey, list);
      }
    }
    this.#pods = pods;
  }
}

