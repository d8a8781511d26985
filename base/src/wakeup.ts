import type { Clock } from './clock.js';
import { abortError } from './errors.js';

/**
 * A coalescing wake-up, like Go's `make(chan struct{}, 1)`: any number of `notify()` calls
 * before a `wait()` wake it once. Used by pod workers and loops that reconcile to the latest state.
 */
export class Wakeup {
  #pending = false;
  #resolve: (() => void) | undefined;

  notify(): void {
    if (this.#resolve) {
      const r = this.#resolve;
      this.#resolve = undefined;
      r();
    } else {
      this.#pending = true;
    }
  }

  /**
   * Resolves on the next `notify()` (at once when one is pending), or after `timeout.ms` on
   * `timeout.clock` when given (a loop that wakes on events and at least every period); rejects
   * with an AbortError when `signal` aborts. One waiter at a time. Leaves no timer or listener behind.
   */
  wait(signal?: AbortSignal, timeout?: { clock: Clock; ms: number }): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      let cancelTimer: (() => void) | undefined;
      const onAbort = (): void => {
        this.#resolve = undefined;
        cancelTimer?.();
        reject(abortError(signal?.reason));
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        cancelTimer?.();
        resolve();
      };
      this.#resolve = wake;
      if (timeout) {
        cancelTimer = timeout.clock.setTimer(timeout.ms, () => {
          cancelTimer = undefined;
          if (this.#resolve === wake) this.#resolve = undefined;
          wake();
        });
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
