/**
 * The API server's request path as a chain of filters, in kube-apiserver's order
 * (docs/apiserver.md, "The request path"):
 *
 *   recovery ─▶ request info ─▶ timeout ─▶ public paths ─▶ audit begin ─▶ authentication ─▶ audit ─▶ impersonation
 *            ─▶ max in flight ─▶ authorization ─▶ handler (admission runs inside the write handlers)
 *
 * Each filter gets the request and `next`, may stop the request by throwing a `StatusError` (the
 * recovery filter writes it), and releases what it took in a `finally` of its own, whatever
 * happens downstream. One {@link ApiRequest} carries the request's state and its one
 * cancellation signal from filter to filter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../auth/types.js';
import type { RequestScope } from '../context.js';
import type { AuditHandle } from '../audit/index.js';

/** A filter: does its part, then calls `next` (or not, to stop the request). */
export type Filter = (r: ApiRequest, next: () => Promise<void>) => Promise<void>;

/** The end of the chain. */
export type Handler = (r: ApiRequest) => Promise<void>;

/** Runs `filters` in order around `handler`; `next` called twice runs the rest only once. */
export function runChain(filters: readonly Filter[], handler: Handler, r: ApiRequest): Promise<void> {
  const step = (i: number): Promise<void> => {
    const filter = filters[i];
    if (!filter) return handler(r);
    let called: Promise<void> | undefined;
    return filter(r, () => (called ??= step(i + 1)));
  };
  return step(0);
}

/**
 * The abort reason of every request whose reply closed: one shared error, as a DOMException per
 * request (its stack captured at a close handler, which says nothing) cost about 1 % of the
 * server's thread on the create path.
 */
const REQUEST_ENDED = new DOMException('the request ended', 'AbortError');

/**
 * One request on its way through the chain. Created by the server per request (or upgrade);
 * each filter fills in what it found out.
 *
 * The signal aborts when the request timed out (with the 504's `StatusError` as reason, once
 * the 504 is out) or when the reply is closed (answered, or the client went away). The body read, admission and the REST verbs' store calls take it.
 */
export class ApiRequest {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  #endReason: unknown;
  /** performance.now() when the request arrived. */
  readonly started = performance.now();
  /** The parsed request target (request-info filter). */
  url?: URL;
  /** Watches, proxies, log/exec/attach/portforward: no timeout, no in-flight slot (request-info filter). */
  longRunning = false;
  /** The request's audit event, when an audit policy is configured (audit filter). */
  audit?: AuditHandle;
  /** Who sent the request (authentication filter). */
  authenticated?: UserInfo;
  /** Who the request runs as: `authenticated`, or whom it impersonates (impersonation filter). */
  user?: UserInfo;
  /** A resource request, authorized (authorization filter). Unset for non-resource paths. */
  scope?: RequestScope;
  /** For a GET/HEAD of a non-resource path: whether the user may `get` it (authorization filter). */
  nonResourceAllowed?: boolean;

  /**
   * @param upgrade set for an HTTP upgrade (exec, attach, portforward): `res` is then bound to no
   *   socket, and failures are written raw to `upgrade.socket`.
   */
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly upgrade?: { socket: Duplex; head: Buffer },
  ) {
    this.signal = this.#controller.signal;
    const ended = (): void => this.#controller.abort(this.#endReason ?? REQUEST_ENDED);
    if (upgrade) upgrade.socket.once('close', ended);
    else res.once('close', ended);
  }

  /** Aborts the request's signal now (idempotent: the first reason stays). */
  abort(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /** The reason the signal will abort with when the reply closes (the timeout's 504). */
  abortWhenClosed(reason: unknown): void {
    this.#endReason ??= reason;
  }
}
