/**
 * The one percentile every bench reports, so a p99 in one bench means what it means in another.
 *
 * Definition: **nearest rank**. The p-th percentile of n samples is the sample at 1-based rank
 * ⌈p/100 · n⌉ in ascending order (rank 1 for p = 0). It is always one of the samples (never an
 * interpolation), so a p99 over 100 samples is the 99th smallest and over 50 samples the largest.
 */

/** 0-based index into n ascending samples of their nearest-rank p-th percentile (p in 0..100); -1 when n is 0. */
export function percentileIndex(n: number, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  if (n <= 0) return -1;
  return Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
}

/** Nearest-rank p-th percentile of `samples` (any order; not modified); NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[percentileIndex(sorted.length, p)] ?? NaN;
}
