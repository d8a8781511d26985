/**
 * crictl's output primitives, reproduced exactly: Go tabwriter layout (minwidth 20, tabwidth 1,
 * padding 3, pad ' '), 13-character IDs, docker/go-units sizes and durations.
 */

/** `getTruncatedID`: strip `prefix`, keep 13 characters. */
export const TRUNCATED_ID_LEN = 13;
export function truncateId(id: string, prefix = ''): string {
  const s = prefix && id.startsWith(prefix) ? id.slice(prefix.length) : id;
  return s.length > TRUNCATED_ID_LEN ? s.slice(0, TRUNCATED_ID_LEN) : s;
}

/**
 * Go's text/tabwriter with crictl's settings. Every cell but the last of a row is tab-terminated
 * and padded to max(minwidth, widest cell in its column + padding); the last cell is written as is.
 * Widths count code points, as tabwriter counts runes.
 */
export function tabwrite(rows: string[][], opts: { minWidth?: number; padding?: number } = {}): string {
  const minWidth = opts.minWidth ?? 20;
  const padding = opts.padding ?? 3;
  const len = (s: string): number => [...s].length;
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) widths[i] = Math.max(widths[i] ?? minWidth, len(row[i] ?? '') + padding);
  }
  return rows
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell + ' '.repeat((widths[i] ?? minWidth) - len(cell)) : cell)).join('') + '\n')
    .join('');
}

/** Go's `%.<p>g`: exponent form when exp < -4 or exp >= p, trailing zeros removed, exponent e±NN. */
export function goFormatG(value: number, precision: number): string {
  if (value === 0) return '0';
  const trim = (x: string): string => (x.includes('.') ? x.replace(/0+$/, '').replace(/\.$/, '') : x);
  const [mantissa, expText] = value.toExponential(precision - 1).split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= precision) return `${trim(mantissa)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return trim(value.toFixed(Math.max(0, precision - 1 - exp)));
}

const DECIMAL_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];

/** go-units `HumanSizeWithPrecision`: decimal (1000) steps. */
export function humanSizeWithPrecision(size: number, precision: number): string {
  let i = 0;
  while (size >= 1000 && i < DECIMAL_UNITS.length - 1) {
    size /= 1000;
    i++;
  }
  return `${goFormatG(size, precision)}${DECIMAL_UNITS[i]}`;
}

/** go-units `HumanSize`: 4 significant digits. */
export function humanSize(size: number): string {
  return humanSizeWithPrecision(size, 4);
}

/** go-units `HumanDuration`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000); // d.Round(time.Hour)
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.trunc(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.trunc(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24 / 30)} months`;
  return `${Math.trunc(Math.trunc(ms / 3_600_000) / 24 / 365)} years`;
}

/** "<HumanDuration> ago" for a CRI created_at (nanoseconds since the epoch, as a decimal string). */
export function ago(createdAtNs: string | number | undefined, nowMs: number): string {
  const createdMs = Number(BigInt(String(createdAtNs ?? 0)) / 1_000_000n);
  return `${humanDuration(nowMs - createdMs)} ago`;
}

/**
 * protojson-like rendering of a reply for `-o json|yaml`: drops fields at their default value
 * (empty strings, false, 0, null, empty lists and maps) except inside map fields, where every
 * entry is data.
 */
const MAP_FIELDS = new Set(['labels', 'annotations', 'sysctls', 'unified', 'info', 'labelSelector']);
export function pruneDefaults(value: unknown, inMap = false): unknown {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map((v) => pruneDefaults(v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  // proto-loader puts map fields first; protojson prints fields in field-number order, where CRI's
  // maps (labels, annotations, info) mostly come last. Approximate that.
  const entries = Object.entries(value as Record<string, unknown>);
  if (!inMap) entries.sort(([a], [b]) => Number(MAP_FIELDS.has(a)) - Number(MAP_FIELDS.has(b)));
  for (const [k, v] of entries) {
    if (inMap) {
      out[k] = v;
      continue;
    }
    const pv = pruneDefaults(v, MAP_FIELDS.has(k));
    if (pv === '' || pv === false || pv === 0 || pv === null || pv === undefined) continue;
    if (Array.isArray(pv) && pv.length === 0) continue;
    if (typeof pv === 'object' && !Array.isArray(pv) && Object.keys(pv as object).length === 0) continue;
    out[k] = pv;
  }
  return out;
}

export function toJson(value: unknown): string {
  return `${JSON.stringify(pruneDefaults(value), null, 2)}\n`;
}
