/** Parses `500ms`, `30s`, `2m`, `1h` (or a bare number of seconds) into milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new Error(`invalid duration "${s}": use a number with ms, s, m or h (e.g. 30s)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit]!);
}
