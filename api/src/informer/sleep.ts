import { abortError, type Clock } from '@nodelet/base';

/** Waits `ms` on the injected clock; rejects with AbortError when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal.reason));
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(abortError(signal.reason));
    };
    const cancel = clock.setTimer(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
