/**
 * Kubernetes resource quantities ("500m", "128Mi", "1.5G", "2") as plain numbers.
 *
 * HACK(api-package): `@nodelet/api` brings its own quantity type; this is the small subset the agent
 * needs to turn requests/limits into cgroup numbers, kept local so the runtime core has no wait on it.
 */
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const RE = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** Parses a quantity into its value in base units (cores, bytes). Throws RangeError on malformed input. */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = RE.exec(q.trim());
  if (!m || Number.isNaN(Number(m[1]))) throw new RangeError(`invalid quantity "${q}" (expected e.g. "500m", "128Mi", "2")`);
  const suffix = m[2] ?? '';
  // An exponent form like 1e3 leaves suffix empty.
  const mult = BINARY[suffix] ?? DECIMAL[suffix];
  return Number(m[1]) * (mult ?? 1);
}

/** CPU quantity → millicores, rounded up like the kubelet's MilliValue(). */
export function milliCpu(q: string | number): number {
  return Math.ceil(parseQuantity(q) * 1000 - 1e-9);
}

/** Bytes as a Kubernetes quantity with a binary suffix when exact ("4Gi"), else "<n>Ki" or plain bytes. */
export function formatBytes(bytes: number): string {
  const b = Math.max(0, Math.floor(bytes));
  for (const [s, m] of [['Gi', 2 ** 30], ['Mi', 2 ** 20]] as const) if (b % m === 0 && b >= m) return `${b / m}${s}`;
  if (b % 1024 === 0) return `${b / 1024}Ki`;
  return String(b);
}
