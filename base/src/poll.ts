import { AgentError, describeError } from './errors.js';
import { delay } from './abort.js';

export interface PollOptions {
  /** Give up after this long (ERR_DEADLINE_EXCEEDED naming `what` and the last error). */
  timeoutMs: number;
  /** Pause between attempts; default 100 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Appended to the timeout message (e.g. a log tail), computed only on failure. */
  detail?: () => string | Promise<string>;
}

/**
 * Calls `check` until it returns something other than `undefined`/`false`, and returns that.
 * A throwing `check` counts as "not yet" (its error is reported if the deadline passes). For
 * waiting on a condition owned by another process (a socket, a Ready node), where there is no
 * event to await; code that can await an event should await it instead.
 */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, o: PollOptions): Promise<T> {
  const until = Date.now() + o.timeoutMs;
  let last: unknown;
  for (;;) {
    o.signal?.throwIfAborted();
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) {
      const tail = o.detail ? `\n${await o.detail()}` : '';
      throw new AgentError('ERR_DEADLINE_EXCEEDED', `timed out after ${o.timeoutMs} ms waiting for ${what}${last ? ` (last error: ${describeError(last)})` : ''}${tail}`);
    }
    await delay(o.intervalMs ?? 100, o.signal);
  }
}
