/**
 * Quantity → integer conversions for the scheduler's arithmetic (milli-CPU, bytes).
 *
 * HACK(api not landed yet): a minimal parser of the Kubernetes quantity grammar until
 * `@nodelet/api`'s `parseQuantity` exists; then this file becomes two thin wrappers over it.
 */
const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const RE = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

function parse(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = RE.exec(q.trim());
  if (!m) throw new RangeError(`quantity "${q}" does not match the Kubernetes quantity format`);
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return base * (SUFFIX[m[3] ?? ''] ?? 1);
}

/** The quantity in thousandths, rounded up (`100m` → 100, `1` → 1000), as `MilliValue()`. */
export function quantityMilli(q: string | number): number {
  return Math.ceil(Math.round(parse(q) * 1e6) / 1e3);
}

/** The quantity as an integer, rounded up (`128Mi` → 134217728), as `Value()`. */
export function quantityValue(q: string | number): number {
  return Math.ceil(Math.round(parse(q) * 1e3) / 1e3);
}
