/**
 * Completion indexes of Indexed Jobs: the `batch.kubernetes.io/job-completion-index` of a pod and
 * the interval form of `status.completedIndexes` (`1,3-5,7`).
 */
import type { Pod } from '@nodelet/api';

export const COMPLETION_INDEX_KEY = 'batch.kubernetes.io/job-completion-index';
export const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/** The pod's index (annotation first, as upstream), or undefined when missing or not a decimal integer. */
export function podCompletionIndex(p: Pod): number | undefined {
  const v = p.metadata.annotations?.[COMPLETION_INDEX_KEY] ?? p.metadata.labels?.[COMPLETION_INDEX_KEY];
  if (v === undefined || !/^(0|[1-9]\d*)$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Parses `1,3-5` into a set, keeping only indexes below `completions`; malformed parts are skipped. */
export function parseIndexes(s: string | undefined, completions: number): Set<number> {
  const out = new Set<number>();
  for (const part of (s ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = Math.min(m[2] === undefined ? from : Number(m[2]), completions - 1);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return out;
}

/** Formats a set of indexes as sorted intervals: {1,3,4,5,7} → `1,3-5,7`. */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The `count` lowest indexes below `completions` that are neither succeeded nor active. */
export function firstPendingIndexes(taken: ReadonlySet<number>, count: number, completions: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < count; i++) if (!taken.has(i)) out.push(i);
  return out;
}
