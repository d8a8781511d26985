/**
 * The outermost filter of every API request (kube-apiserver's panic recovery, request-info,
 * timeout and max-in-flight filters, in one place):
 *
 *   serve ─▶ parse the target (400) ─▶ long-running? ─no─▶ arm the request timeout (504)
 *        └▶ handler(url) ─▶ [after authentication] admit: in-flight slot (429) ─▶ …
 *        └▶ anything the handler lets escape: 500 Status, logged; never a rejected promise
 *
 * The timeout answers the client and closes the connection; the handler is not cancelled and may
 * still finish its work (kube-apiserver's timeout filter behaves the same). Its in-flight slot is
 * released only when it does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRequestTarget } from '@nodelet/api';
import type { Logger } from '@nodelet/base';
import type { UserInfo } from './auth/types.js';
import { InflightLimiter, isLongRunning, type ApiServerLimits } from './limits.js';
import { sendError } from './respond.js';
import { badRequest, StatusError } from './status.js';

const requestTimedOut = (): StatusError => new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded');

export class RequestGuard {
  readonly #limits: ApiServerLimits;
  readonly #log: Logger;
  readonly #inflight: InflightLimiter;
  readonly #longRunning = new WeakMap<IncomingMessage, boolean>();

  constructor(o: { limits: ApiServerLimits; logger: Logger }) {
    this.#limits = o.limits;
    this.#log = o.logger;
    this.#inflight = new InflightLimiter(o.limits);
  }

  /**
   * Runs `handler` for one request under the bounds above. Never rejects: whatever escapes the
   * handler becomes a 500 Status (or a destroyed response once its head is out).
   */
  async serve(req: IncomingMessage, res: ServerResponse, handler: (url: URL) => Promise<void>): Promise<void> {
    // A response write that fails (the client went away) must not become an uncaught 'error'.
    res.on('error', (err) => this.#log.debug({ err, method: req.method }, 'Response write failed'));
    const url = parseRequestTarget(req.url);
    if (!url) {
      sendError(res, badRequest(`malformed request target "${truncate(req.url ?? '')}"`));
      return;
    }
    const longRunning = isLongRunning(req.method ?? 'GET', url);
    this.#longRunning.set(req, longRunning);
    let timer: NodeJS.Timeout | undefined;
    if (!longRunning && this.#limits.requestTimeoutMs > 0) {
      timer = setTimeout(() => this.#timeOut(req, res, url), this.#limits.requestTimeoutMs);
    }
    try {
      await handler(url);
    } catch (err) {
      this.#log.error({ err, method: req.method, path: url.pathname }, 'Request handler failed');
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Takes an in-flight slot for an authenticated request (429 TooManyRequests when full). Called
   * after authentication because `system:masters` is exempt; long-running requests take none.
   * Returns the release, to call when the request ends.
   */
  admit(req: IncomingMessage, user: UserInfo): () => void {
    if (this.#longRunning.get(req) !== false) return () => undefined;
    return this.#inflight.acquire(req.method ?? 'GET', user);
  }

  /** Slots in use (tests). */
  inflight(): { readOnly: number; mutating: number } {
    return this.#inflight.inUse();
  }

  #timeOut(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (res.writableEnded) return;
    this.#log.warn({ method: req.method, path: url.pathname, timeoutMs: this.#limits.requestTimeoutMs }, 'Request timed out');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // The handler may still be reading the body or writing the store: close the connection so
    // nothing else goes out on it after this reply.
    res.setHeader('Connection', 'close');
    sendError(res, requestTimedOut());
  }
}

function truncate(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s;
}
