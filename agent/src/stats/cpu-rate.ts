/**
 * `usageNanoCores` from two samples of a cumulative CPU counter, as kubelet computes it for the
 * Summary API (and metrics-server for metrics.k8s.io): the counter's increase in nanoseconds of
 * CPU time divided by the wall time between the samples, in seconds → nanocores.
 *
 *   sample 1: (t1, u1)   sample 2: (t2, u2)   usageNanoCores = (u2 − u1) / (t2 − t1) · 1e9   (t in ns)
 *
 * A counter that went backwards (the container restarted, the cgroup was recreated) or a clock
 * that did not move yields no rate, never a negative or infinite one.
 */

export interface CpuSample {
  /** When the counter was read, nanoseconds since the epoch. */
  timeNs: number;
  /** Cumulative CPU time, nanoseconds. */
  usageNs: number;
}

/** Nanocores between `prev` and `cur`, or undefined when no rate can be given (pure). */
export function nanoCores(prev: CpuSample | undefined, cur: CpuSample): number | undefined {
  if (!prev) return undefined;
  const dt = cur.timeNs - prev.timeNs;
  const du = cur.usageNs - prev.usageNs;
  if (!(dt > 0) || du < 0) return undefined;
  return Math.round((du / dt) * 1e9);
}

/**
 * The previous sample of each counter (node, pod, container), so each new sample gets a rate.
 * Owned by one collector; not safe to share between two. `prune` drops counters not seen in the
 * latest round, so the map does not grow with every container that ever ran.
 */
export class CpuRates {
  #prev = new Map<string, CpuSample & { rate?: number }>();
  #seen = new Set<string>();

  /**
   * Records `cur` for `key` and returns the rate since the previous sample. A sample no newer
   * than the stored one (the runtime answered from its own cache) keeps the stored rate.
   */
  observe(key: string, cur: CpuSample): number | undefined {
    this.#seen.add(key);
    const prev = this.#prev.get(key);
    if (prev && cur.timeNs <= prev.timeNs) return prev.rate;
    const rate = nanoCores(prev, cur);
    this.#prev.set(key, { ...cur, rate });
    return rate;
  }

  /** Forgets counters not observed since the last prune. */
  prune(): void {
    for (const k of this.#prev.keys()) if (!this.#seen.has(k)) this.#prev.delete(k);
    this.#seen.clear();
  }

  get size(): number {
    return this.#prev.size;
  }
}
