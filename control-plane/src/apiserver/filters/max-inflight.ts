/**
 * The in-flight limit (kube-apiserver's WithMaxInFlightLimit, --max-requests-inflight and
 * --max-mutating-requests-inflight): a request that is not long-running takes a slot of its pool
 * or gets `429 TooManyRequests`. It runs after impersonation, as upstream's, because
 * `system:masters` is never refused (limits.ts).
 *
 * The slot is released when the rest of the chain returns or throws, or when the request's
 * signal aborts (timeout, client gone), whichever comes first: a handler that is still
 * unwinding after its timeout holds no slot.
 */
import type { InflightLimiter } from '../limits.js';
import type { Filter } from './chain.js';

export function maxInflightFilter(limiter: InflightLimiter): Filter {
  return async (r, next) => {
    if (r.longRunning) return next();
    r.signal.throwIfAborted();
    const release = limiter.acquire(r.req.method ?? 'GET', r.user!);
    r.signal.addEventListener('abort', release, { once: true });
    try {
      await next();
    } finally {
      r.signal.removeEventListener('abort', release);
      release();
    }
  };
}
