/** Go `time.Duration` strings as used in KubeletConfiguration ("10s", "1m30s", "2m0s", "500ms"). */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds of a Go duration string; a bare number is taken as milliseconds. Throws RangeError. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') return value;
  const s = value.trim();
  if (s === '0') return 0;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    PART.lastIndex = pos;
    const m = PART.exec(s);
    if (!m) throw new RangeError(`invalid duration "${value}" (expected e.g. "10s", "1m30s", "500ms")`);
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  if (s.length === 0) throw new RangeError('empty duration');
  return total;
}
