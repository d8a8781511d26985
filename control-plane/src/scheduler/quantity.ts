/**
 * Quantity → integer conversions for the scheduler's arithmetic (milli-CPU, bytes, pod counts).
 * Results are memoised per string: a cluster uses a handful of distinct quantities (`100m`,
 * `128Mi`, …) and the scheduler converts them for every pod update it sees.
 */
import { parseQuantity, parseQuantityMilli } from '@nodelet/api';

/** Distinct strings remembered per conversion; past this the memo starts over (bounded memory). */
const MEMO_LIMIT = 4096;
const milliMemo = new Map<string, number>();
const valueMemo = new Map<string, number>();

function memo(m: Map<string, number>, q: string, parse: (s: string) => number): number {
  let v = m.get(q);
  if (v === undefined) {
    // Throws ERR_INVALID_ARGUMENT for a malformed quantity; nothing is remembered then.
    v = parse(q);
    if (m.size >= MEMO_LIMIT) m.clear();
    m.set(q, v);
  }
  return v;
}

const parseValueUp = (s: string): number => Math.ceil(parseQuantity(s));

/** The quantity in thousandths, rounded up (`100m` → 100, `1` → 1000), as upstream `MilliValue()`. */
export function quantityMilli(q: string | number): number {
  return typeof q === 'number' ? Math.ceil(q * 1000) : memo(milliMemo, q, parseQuantityMilli);
}

/** The quantity as an integer, rounded up (`128Mi` → 134217728), as upstream `Value()`. */
export function quantityValue(q: string | number): number {
  return typeof q === 'number' ? Math.ceil(q) : memo(valueMemo, q, parseValueUp);
}
