import type { Clock } from './clock.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Multiplier per failure; kubelet uses 2. */
  factor?: number;
  /** After this long without a failure the delay starts over (kubelet: 2 × maxMs for images, 10 min for crash loops). */
  resetAfterMs?: number;
  clock: Clock;
}

/**
 * Exponential backoff, optionally keyed (one delay per container or image).
 * Mirrors client-go's `flowcontrol.Backoff`: `next(key)` records a failure and returns the delay
 * to wait; `isInBackoff(key)` tells whether that delay has not yet elapsed.
 */
export class Backoff {
  readonly #opts: Required<Omit<BackoffOptions, 'resetAfterMs'>> & { resetAfterMs?: number };
  readonly #entries = new Map<string, { delayMs: number; lastFailure: number }>();

  constructor(opts: BackoffOptions) {
    this.#opts = { factor: 2, ...opts };
  }

  /** Records a failure for `key` and returns how long to wait before the next try. */
  next(key = ''): number {
    const now = this.#opts.clock.now();
    const e = this.#entries.get(key);
    let delayMs = this.#opts.initialMs;
    if (e && !this.#expired(e, now)) delayMs = Math.min(e.delayMs * this.#opts.factor, this.#opts.maxMs);
    this.#entries.set(key, { delayMs, lastFailure: now });
    return delayMs;
  }

  /** The current delay for `key` without recording a failure (0 when none). */
  current(key = ''): number {
    const e = this.#entries.get(key);
    if (!e || this.#expired(e, this.#opts.clock.now())) return 0;
    return e.delayMs;
  }

  /** True while the delay after the last failure of `key` has not elapsed. */
  isInBackoff(key = ''): boolean {
    const e = this.#entries.get(key);
    if (!e) return false;
    return this.#opts.clock.now() - e.lastFailure < e.delayMs;
  }

  reset(key = ''): void {
    this.#entries.delete(key);
  }

  /** Drops every key that starts with `prefix` (the entries of a pod that is gone). */
  forgetPrefix(prefix: string): void {
    for (const k of this.#entries.keys()) if (k.startsWith(prefix)) this.#entries.delete(k);
  }

  #expired(e: { lastFailure: number }, now: number): boolean {
    const resetAfter = this.#opts.resetAfterMs ?? this.#opts.maxMs * 2;
    return now - e.lastFailure > resetAfter;
  }
}
