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

  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#resolve = undefined;
        reject(abortError(signal?.reason));
      };
      this.#resolve = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
