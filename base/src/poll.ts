import { AgentError, describeError } from './errors.js';
import { delay } from './abort.js';

export interface PollOptions {
  /** Give up after this long (ERR_DEADLINE_EXCEEDED naming `what` and the last check's error). */
  timeoutMs: number;
  /** Pause between attempts; default 100 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Appended to the timeout message (e.g. a log tail), computed only on failure. */
  detail?: () => string | Promise<string>;
  /**
   * A check error for which this returns true is not "not yet": the wait ends at once with that
   * error, not at the deadline. Default {@link isCheckDefect}: a failed assert or a bug in the check
   * ends the wait; every other error (not found, refused, a TLS handshake with a server still
   * starting) is "not yet". A caller that really expects one of the defect kinds while it waits
   * says so with its own predicate.
   */
  fatal?: (err: unknown) => boolean;
}

/** An `assert` failure (node:assert's AssertionError, code ERR_ASSERTION). */
export function isAssertionError(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'ERR_ASSERTION';
}

/**
 * True for errors no amount of waiting changes: a failed assert (a claim), a ReferenceError or
 * RangeError, or a TypeError that is not a network failure (`fetch` reports those as a TypeError
 * whose `cause` is the socket's error; a TypeError of its own, such as reading a property of
 * undefined, is the check's bug and would otherwise hide until the deadline as "not yet").
 * A SyntaxError stays "not yet": a check may read a file or a stream still being written.
 */
export function isCheckDefect(err: unknown): boolean {
  if (isAssertionError(err)) return true;
  if (err instanceof ReferenceError || err instanceof RangeError) return true;
  return err instanceof TypeError && (err as { cause?: unknown }).cause === undefined;
}

/**
 * Calls `check` every `intervalMs` until it returns a truthy value, and returns that: the one
 * way nodelet's code and tests wait for a condition owned by someone else (a socket, a Ready
 * node, a controller's write) where there is no event to await; code that can await an event
 * should await it instead. A throwing `check` counts as "not yet" unless `o.fatal` (by default
 * {@link isCheckDefect}) says the error is final, which ends the wait with it at once. At the deadline it throws
 * ERR_DEADLINE_EXCEEDED naming `what`, how many checks ran, the last check's error if it threw,
 * and `detail()`; an abort of `signal` ends it at once with the signal's reason.
 */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined | null | false> | T | undefined | null | false, o: PollOptions): Promise<T> {
  const until = Date.now() + o.timeoutMs;
  let checks = 0;
  for (;;) {
    o.signal?.throwIfAborted();
    let failed: unknown;
    checks++;
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if ((o.fatal ?? isCheckDefect)(err)) throw err;
      failed = err;
    }
    if (Date.now() > until) {
      const tail = o.detail ? `\n${await o.detail()}` : '';
      const last = failed === undefined ? '' : `; the last failed: ${describeError(failed)}`;
      throw new AgentError('ERR_DEADLINE_EXCEEDED', `timed out after ${o.timeoutMs} ms waiting for ${what} (${checks} check${checks === 1 ? '' : 's'}${last})${tail}`);
    }
    await delay(o.intervalMs ?? 100, o.signal);
  }
}
