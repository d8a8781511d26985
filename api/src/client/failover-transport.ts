/**
 * One client, several API servers: the transport an ApiClient uses when it is given more than
 * one server URL (an HA control plane, docs/ha.md "Agent fail-over"). It talks to ONE server at a
 * time and moves to the next only when that server cannot be reached:
 *
 *   current ──request──▶ reply (any HTTP status, 5xx included) ─────────────▶ stays current
 *      │
 *      └─ no reply: refused / reset / socket error / deadline ─▶ next server becomes current
 *             ├─ the request never left (connect failed) or is a GET ─▶ sent again there
 *             └─ a write that may have reached the dead server ──────▶ its error is returned;
 *                the caller's own retry goes to the new current server
 *
 *   current ≠ first ──every probeIntervalMs──▶ GET /readyz on each preferred server ─200─▶ back
 *
 * Sticky while healthy: a server that answers is kept, whatever its replies say, so a client
 * does not flap between servers that are all up. Each server keeps its own connection pool, so
 * a fail-over does not wait for the dead server's sockets to time out. A write is never sent
 * twice by this layer unless the first attempt provably never reached a server: the same rule
 * the etcd store follows for etcd (control-plane/src/storage/etcd/etcd-store.ts).
 *
 * Concurrency: requests in flight when the current server dies each fail over on their own;
 * the first to notice moves `current` and the others see it moved and do not move it again.
 */
import type { Readable } from 'node:stream';
import { AgentError, errCode, hasCode, noopLogger, systemClock, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import { statusOf } from './errors.js';
import { createTransport, type RawResponse, type RequestOptions, type ResponseHeaders, type Transport, type TransportOptions } from './transport.js';

/** What ApiClient needs of a transport; both {@link Transport} and {@link FailoverTransport} have it. */
export interface ApiTransport {
  /** The server requests go to now. */
  readonly server: URL;
  request(o: RequestOptions): Promise<RawResponse>;
  stream(o: RequestOptions): Promise<{ statusCode: number; headers: ResponseHeaders; body: Readable }>;
  setToken(token: string): void;
  reloadToken(): void;
  close(): void;
}

export interface FailoverOptions extends TransportOptions {
  /** Every server, most preferred first (at least two; `server` is ignored). */
  servers: readonly string[];
  /** How often a preferred server is probed (`/readyz`) while the client is on another. Default 5 s. */
  probeIntervalMs?: number;
  clock?: Clock;
}

/** Default period of the probe that brings the client back to its preferred server. */
export const DEFAULT_PROBE_INTERVAL_MS = 5_000;
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Socket errors raised before a request was written: connecting failed, so no server saw the
 * request and it may be sent to another one, whatever its method.
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** Builds a transport for one server or, with several distinct URLs, a {@link FailoverTransport}. */
export function createApiTransport(opts: TransportOptions & { servers?: readonly string[]; probeIntervalMs?: number; clock?: Clock }): ApiTransport {
  const servers = [...new Set([opts.server, ...(opts.servers ?? [])])];
  if (servers.length < 2) return createTransport(opts);
  return new FailoverTransport({ ...opts, servers });
}

export class FailoverTransport implements ApiTransport {
  readonly #transports: Transport[];
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #probeIntervalMs: number;
  #current = 0;
  #probe: PeriodicJob | undefined;
  #closed = false;

  constructor(opts: FailoverOptions) {
    if (opts.servers.length < 2) throw new AgentError('ERR_INVALID_ARGUMENT', 'fail-over needs at least two API server URLs');
    // Each URL is checked by its Transport's constructor (https:// or http://).
    this.#transports = opts.servers.map((server) => createTransport({ ...opts, server }));
    this.#log = (opts.logger ?? noopLogger).child({ component: 'api-failover' });
    this.#clock = opts.clock ?? systemClock;
    this.#probeIntervalMs = opts.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  }

  get server(): URL {
    return this.#transports[this.#current]!.server;
  }

  /** Every server, most preferred first. */
  get servers(): URL[] {
    return this.#transports.map((t) => t.server);
  }

  request(o: RequestOptions): Promise<RawResponse> {
    return this.#withFailover(o, (t) => t.request(o));
  }

  stream(o: RequestOptions): Promise<{ statusCode: number; headers: ResponseHeaders; body: Readable }> {
    return this.#withFailover(o, (t) => t.stream(o));
  }

  setToken(token: string): void {
    for (const t of this.#transports) t.setToken(token);
  }

  reloadToken(): void {
    for (const t of this.#transports) t.reloadToken();
  }

  /** Closes every server's connections and stops the probe. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#probe?.dispose();
    this.#probe = undefined;
    for (const t of this.#transports) t.close();
  }

  /** Tries the current server, then each other one at most once while the failure allows it. */
  async #withFailover<T>(o: RequestOptions, send: (t: Transport) => Promise<T>): Promise<T> {
    let index = this.#current;
    for (let tried = 1; ; tried++) {
      try {
        return await send(this.#transports[index]!);
      } catch (err) {
        if (this.#closed || o.signal?.aborted || !unreachable(err)) throw err;
        index = this.#moveOff(index, err);
        const again = notSent(err) || (o.method === 'GET' && !hasCode(err, 'ERR_DEADLINE_EXCEEDED'));
        if (!again || tried >= this.#transports.length) throw err;
      }
    }
  }

  /** `failed` did not answer: the next server becomes current (unless another request moved it already). */
  #moveOff(failed: number, err: unknown): number {
    if (this.#current !== failed) return this.#current;
    const next = (failed + 1) % this.#transports.length;
    this.#current = next;
    this.#log.warn({ from: this.#transports[failed]!.server.origin, to: this.#transports[next]!.server.origin, code: errCode(err) }, 'API server unreachable; failing over');
    this.#syncProbe();
    return next;
  }

  /** The probe runs exactly while the client is away from its first server. */
  #syncProbe(): void {
    if (this.#current === 0 || this.#closed) {
      this.#probe?.dispose();
      this.#probe = undefined;
      return;
    }
    this.#probe ??= this.#clock.every(this.#probeIntervalMs, (signal) => this.#probePreferred(signal), {
      onError: (err) => this.#log.debug({ err }, 'API server probe failed'),
    });
  }

  /** Moves back to the most preferred server whose `/readyz` answers 200. */
  async #probePreferred(signal: AbortSignal): Promise<void> {
    for (let i = 0; i < this.#current; i++) {
      const t = this.#transports[i]!;
      const ok = await t.request({ method: 'GET', path: '/readyz', accept: '*/*', signal, timeoutMs: PROBE_TIMEOUT_MS }).then(
        () => true,
        () => false,
      );
      if (!ok || this.#closed || i >= this.#current) continue;
      this.#log.info({ from: this.#transports[this.#current]!.server.origin, to: t.server.origin }, 'Preferred API server ready again; moving back');
      this.#current = i;
      this.#syncProbe();
      return;
    }
  }
}

/** No HTTP reply came back: the server is down, unreachable or hung (not a refusal it sent). */
function unreachable(err: unknown): boolean {
  if (statusOf(err) !== undefined) return false;
  return hasCode(err, 'ERR_UNAVAILABLE') || hasCode(err, 'ERR_DEADLINE_EXCEEDED');
}

/** The request provably never reached a server (see {@link NOT_SENT_CODES}). */
function notSent(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  }
  return false;
}
