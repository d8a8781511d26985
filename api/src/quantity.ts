/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource): `100m`, `1.5`, `128Mi`,
 * `1G`, `1e3`. Values are JavaScript numbers in base units (cores, bytes); exact for every
 * integer below 2^53 and for CPU at milli precision, which covers what a node reports.
 */
import { AgentError } from '@nodelet/base';

export type QuantityFormat = 'DecimalSI' | 'BinarySI';

const BINARY: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXP = new Map<number, string>(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_BY_POW = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

const SHAPE = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$/;

interface Parsed {
  /** The number part as written, e.g. `-1.5`. */
  mantissa: string;
  /** Power of ten (decimal suffix or exponent) or power of 1024 (binary suffix). */
  exp: number;
  base: 10 | 1024;
}

function parse(s: string): Parsed {
  const m = SHAPE.exec(s.trim());
  if (!m || m[1] === undefined) throw invalid(s);
  const mantissa = m[1];
  const suffix = m[2] ?? '';
  const bin = BINARY[suffix];
  if (bin !== undefined) return { mantissa, exp: bin, base: 1024 };
  const dec = DECIMAL[suffix];
  if (dec !== undefined) return { mantissa, exp: dec, base: 10 };
  const e = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  if (e && e[1] !== undefined) return { mantissa, exp: Number.parseInt(e[1], 10), base: 10 };
  throw invalid(s);
}

function invalid(s: string): AgentError {
  return new AgentError(
    'ERR_INVALID_ARGUMENT',
    `invalid quantity "${s}": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
  );
}

/** The value in base units: `parseQuantity('100m') === 0.1`, `parseQuantity('1Ki') === 1024`. Throws ERR_INVALID_ARGUMENT. */
export function parseQuantity(s: string): number {
  const p = parse(s);
  // Decimal exponents go through the number parser so `0.1` stays the closest double to 0.1.
  if (p.base === 10) return Number(`${p.mantissa}e${p.exp}`);
  return Number(p.mantissa) * 1024 ** p.exp;
}

/**
 * The value in thousandths of the base unit, rounded up like upstream's `MilliValue()`:
 * `parseQuantityMilli('250m') === 250`, `parseQuantityMilli('1') === 1000`, `'0.1m'` → 1.
 */
export function parseQuantityMilli(s: string): number {
  const p = parse(s);
  if (p.base === 10) {
    const v = Number(`${p.mantissa}e${p.exp + 3}`);
    return roundUp(v);
  }
  return roundUp(Number(p.mantissa) * 1024 ** p.exp * 1000);
}

/** Whether the quantity was written with a binary suffix (`Ki`…`Ei`), so `formatQuantity` can keep the style. */
export function quantityFormat(s: string): QuantityFormat {
  return parse(s).base === 1024 ? 'BinarySI' : 'DecimalSI';
}

function roundUp(v: number): number {
  // Tolerate float noise (0.3e3 = 300.00000000000006) before rounding up.
  const r = Math.round(v);
  return Math.abs(v - r) < 1e-9 * Math.max(1, Math.abs(v)) ? r : Math.ceil(v);
}

/**
 * Canonical form, as the API server prints quantities: the largest suffix that keeps an integer
 * mantissa (`0.1` → `100m`, `1000` → `1k`, `1500` → `1500`; BinarySI `1073741824` → `1Gi`).
 * BinarySI falls back to decimal for values below 1024 or with fractions, like upstream.
 * Precision below a nano-unit is rounded.
 */
export function formatQuantity(value: number, format: QuantityFormat = 'DecimalSI'): string {
  if (!Number.isFinite(value)) throw new AgentError('ERR_INVALID_ARGUMENT', `cannot format quantity ${value}`);
  if (value === 0) return '0';
  if (format === 'BinarySI' && Number.isInteger(value) && Math.abs(value) >= 1024) {
    const v = BigInt(value);
    for (let pow = BINARY_BY_POW.length - 1; pow >= 1; pow--) {
      const unit = 1024n ** BigInt(pow);
      if (v % unit === 0n) return `${v / unit}${BINARY_BY_POW[pow]}`;
    }
    return v.toString();
  }
  const nanos = Number.isInteger(value) ? BigInt(value) * 1_000_000_000n : BigInt(Math.round(value * 1e9));
  if (nanos === 0n) return '0';
  for (let exp = 18; exp >= -9; exp -= 3) {
    const unit = 10n ** BigInt(exp + 9);
    if (nanos % unit === 0n) return `${nanos / unit}${DECIMAL_BY_EXP.get(exp) ?? ''}`;
  }
  return `${nanos}n`;
}

/** Canonical string of a quantity string (`'0.5'` → `'500m'`, `'1024Mi'` → `'1Gi'`). */
export function canonicalQuantity(s: string): string {
  return formatQuantity(parseQuantity(s), quantityFormat(s));
}
