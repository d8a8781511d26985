/**
 * Arithmetic on resource lists (name → quantity string), as upstream's quota helpers
 * (pkg/quota/v1: Add, Subtract, Mask, LessThanOrEqual). Sums keep the first non-zero operand's
 * format, so `128Mi` + `128Mi` prints `256Mi`.
 */
import { formatQuantity, parseQuantityMilli, quantityFormat } from '../quantity.js';

/** Resource name → quantity (`{ pods: '2', 'requests.cpu': '500m' }`). */
export type ResourceList = Record<string, string>;

const milli = (q: string | undefined): number => (q === undefined ? 0 : parseQuantityMilli(q));
const fmt = (m: number, like: string | undefined): string => formatQuantity(m / 1000, like === undefined ? 'DecimalSI' : quantityFormat(like));

/** a + b, key by key. */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  // A zero first operand (a fresh `used`) takes the format of what is added: 0 + 60Mi = 60Mi.
  for (const [k, v] of Object.entries(b)) out[k] = k in a ? fmt(milli(a[k]) + milli(v), milli(a[k]) === 0 ? v : a[k]) : v;
  return out;
}

/** a − b, key by key (keys of either). */
export function subtractLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = fmt(milli(a[k]) - milli(v), a[k] ?? v);
  return out;
}

/** Only the entries of `list` named in `names`. */
export function maskList(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const n of names) if (list[n] !== undefined) out[n] = list[n];
  return out;
}

/** Whether every value is zero. */
export function isZeroList(list: ResourceList): boolean {
  return Object.values(list).every((v) => milli(v) === 0);
}

/** Names whose value in `a` is greater than in `b` (keys of `b` only), sorted. */
export function exceededNames(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(b)
    .filter((k) => milli(a[k]) > milli(b[k]))
    .sort();
}

/** Whether two lists hold the same amounts (formats aside). */
export function equalLists(a: ResourceList, b: ResourceList): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] === undefined || b[k] === undefined || milli(a[k]) !== milli(b[k])) return false;
  return true;
}

/** `k=v,k=v` over `names` (upstream's prettyPrint, as the "exceeded quota" message lists them). */
export function printList(list: ResourceList, names: readonly string[]): string {
  return names.map((n) => `${n}=${list[n] ?? '0'}`).join(',');
}

/** Zero for each name. */
export function zeroList(names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const n of names) out[n] = '0';
  return out;
}
