/**
 * The two timestamp formats of the Kubernetes API. Object fields use metav1.Time (RFC 3339 at
 * second precision: `2026-01-01T00:00:00Z`); Leases and events.k8s.io use metav1.MicroTime
 * (`2026-01-01T00:00:00.000000Z`). Servers and clients compare these as strings, so every writer
 * formats them here.
 */

/** The last second rfc3339 formatted: a server stamps many objects within one second. */
let lastSecond = NaN;
let lastText = '';

/** metav1.Time: RFC 3339 at second precision, as apimachinery marshals it. */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second === lastSecond) return lastText;
  const text = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  lastSecond = second;
  lastText = text;
  return text;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits (the sub-millisecond digits are zero). */
export function rfc3339Micro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
