/**
 * The request timeout (kube-apiserver's WithTimeoutForNonLongRunningRequests and
 * --request-timeout): a request that is not long-running and has not finished in time is
 * answered `504 Timeout`, its signal is aborted, and its connection is closed.
 *
 *   next() ──finishes first──▶ return (timer cleared)
 *     └── timer fires first ─▶ 504 + Connection: close ─▶ reply out ─▶ abort(signal) ─▶ return now
 *                                                      └▶ body not fully received: connection destroyed
 *
 * The filter returns at once: the filters outside it (recovery) are done with the request, and
 * those inside it release what they took when the signal aborts (max-inflight.ts) or when the
 * handler unwinds on the aborted signal (the body read rejects, so a client that declared a
 * body and stopped sending cannot hold anything). The signal aborts once the 504 has been
 * handed to the socket, so cancelling a body read cannot cut the reply short; a reply that
 * cannot go out within {@link REPLY_GRACE_MS} is cut.
 */
import type { Logger } from '@nodelet/base';
import { sendError } from '../respond.js';
import { StatusError } from '../status.js';
import type { ApiRequest, Filter } from './chain.js';

/** How long the 504 may take to reach the socket before the connection is cut. */
export const REPLY_GRACE_MS = 1000;

/** The 504 kube-apiserver's timeout filter answers (its message, verbatim as a fact of the wire). */
export const requestTimedOut = (): StatusError => new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded');

export function timeoutFilter(o: { timeoutMs: number; logger: Logger }): Filter {
  return async (r, next) => {
    if (r.longRunning || o.timeoutMs <= 0) return next();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), o.timeoutMs);
    });
    const handled = next();
    try {
      if ((await Promise.race([handled, expired])) !== true) return;
    } finally {
      clearTimeout(timer);
    }
    // The handler runs on with an aborted signal; what it throws now has no one to answer.
    handled.catch((err: unknown) => o.logger.debug({ err, method: r.req.method, path: r.url?.pathname }, 'Request ended after its timeout'));
    o.logger.warn({ method: r.req.method, path: r.url?.pathname, timeoutMs: o.timeoutMs }, 'Request timed out');
    answerTimedOut(r);
  };
}

/** Answers 504 (or cuts a reply already under way), then aborts the request's signal. */
function answerTimedOut(r: ApiRequest): void {
  const reason = requestTimedOut();
  const { req, res } = r;
  if (res.writableEnded) {
    r.abort(reason);
    return;
  }
  if (res.headersSent) {
    r.abort(reason);
    res.destroy();
    return;
  }
  const grace = setTimeout(() => res.destroy(), REPLY_GRACE_MS);
  grace.unref();
  r.abortWhenClosed(reason);
  res.once('close', () => {
    clearTimeout(grace);
    // A body still arriving (or never arriving) would otherwise hold the socket open.
    if (!req.complete) req.destroy();
  });
  res.setHeader('Connection', 'close');
  sendError(res, reason);
}
