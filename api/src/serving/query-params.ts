/**
 * Query parameters read as kube-apiserver and kubelet read them (apimachinery's
 * `runtime.Convert_Slice_string_To_bool` / `_To_int64`, used by every parameter codec), so the
 * API server and the agent's node API answer the same way and any client's spelling works:
 *
 *   boolean  absent → false; `0` or `false` in any case → false; anything else, even `` or `f` → true
 *            (the official Python client sends `watch=True`, `stdout=True`)
 *   integer  the first value, Go's `strconv.ParseInt(v, 10, 64)`; an unparsable one is an error
 *            naming it as Go does: `strconv.ParseInt: parsing "x": invalid syntax`
 *
 * Only the first value of a repeated parameter counts, as upstream's converters take `[0]`.
 */

import { AgentError } from '@nodelet/base';

/** A query parameter that is not what its type needs: ERR_INVALID_ARGUMENT, which both servers answer 400 with the message. */
export class QueryParamError extends AgentError {
  readonly param: string;
  constructor(param: string, message: string) {
    super('ERR_INVALID_ARGUMENT', message);
    this.name = 'QueryParamError';
    this.param = param;
  }
}

/** The boolean value of `name` (see the module comment). */
export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  return v !== '0' && v.toLowerCase() !== 'false';
}

/** `name` as a boolean when present, else undefined (upstream's `*bool` parameters, e.g. sendInitialEvents). */
export function queryOptionalBool(q: URLSearchParams, name: string): boolean | undefined {
  return q.has(name) ? queryBool(q, name) : undefined;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits, within int64. Returns
 * the value, or throws with Go's error text (`invalid syntax` / `value out of range`). Values
 * beyond 2^53 come back as the nearest JS number; none of the parameters read this way uses them.
 */
export function parseGoInt64(s: string, param = ''): number {
  if (!/^[+-]?\d+$/.test(s)) throw new QueryParamError(param, `strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > INT64_MAX || n < INT64_MIN) throw new QueryParamError(param, `strconv.ParseInt: parsing ${goQuote(s)}: value out of range`);
  return Number(n);
}

/** Go's `strconv.ParseUint(s, 10, 64)` (resource versions): digits only, no sign. */
export function parseGoUint64(s: string, param = ''): number {
  if (!/^\d+$/.test(s)) throw new QueryParamError(param, `strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`);
  if (BigInt(s) > 2n ** 64n - 1n) throw new QueryParamError(param, `strconv.ParseUint: parsing ${goQuote(s)}: value out of range`);
  return Number(s);
}

/** The integer value of `name`, or undefined when absent (see {@link parseGoInt64}). */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null ? undefined : parseGoInt64(v, name);
}

/** Go's `%q` of a string: JSON's quoting is the same for the printable ASCII these messages carry. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}
