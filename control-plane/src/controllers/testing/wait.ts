import { pollUntil } from '@nodelet/base';

/** Polls `fn` until it returns a value (not undefined), failing with `what` after `timeoutMs`. */
export function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 8000): Promise<T> {
  return pollUntil(what, fn, { timeoutMs, intervalMs: 25 });
}
