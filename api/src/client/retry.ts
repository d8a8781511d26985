/**
 * retryOnConflict: client-go's `retry.RetryOnConflict` — re-run a read-modify-write when the
 * server answers 409 Conflict (someone else wrote in between). `fn` must re-read the object on
 * every attempt; only ERR_CONFLICT is retried, every other error is thrown at once.
 */
import { delay, hasCode } from '@nodelet/base';

export interface RetryOnConflictOptions {
  signal?: AbortSignal;
  /** Attempts in total (default 5, client-go's DefaultRetry). */
  attempts?: number;
  /** Wait before the second attempt, doubled each time (default 10 ms). */
  initialDelayMs?: number;
  /** Randomness for jitter (default Math.random); the wait is delay × (1 + 0.1 × r). */
  random?: () => number;
}

export async function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, o: RetryOnConflictOptions = {}): Promise<T> {
  const attempts = o.attempts ?? 5;
  const random = o.random ?? Math.random;
  let wait = o.initialDelayMs ?? 10;
  for (let attempt = 1; ; attempt++) {
    o.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (!hasCode(err, 'ERR_CONFLICT') || attempt >= attempts) throw err;
    }
    await delay(wait * (1 + 0.1 * random()), o.signal);
    wait *= 2;
  }
}
