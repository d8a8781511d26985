import type { Clock, Wakeup } from '@nodelet/base';

/**
 * Waits for `wake` or `ms`, whichever comes first, with a single waiter on the Wakeup.
 * (Racing `wake.wait()` against a delay would leave a stale waiter and its abort listener behind
 * every time the delay wins.)
 */
export async function waitWakeOrTimeout(wake: Wakeup, ms: number, clock: Clock, signal: AbortSignal): Promise<void> {
  const cancel = clock.setTimer(ms, () => wake.notify());
  try {
    await wake.wait(signal);
  } finally {
    cancel();
  }
}
