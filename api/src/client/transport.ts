/**
 * HTTP(S) transport to one API server: keep-alive connections, bearer token, CA / client
 * certificate, per-request AbortSignal and timeout. Everything above it works with decoded
 * replies or AgentErrors (translated in ./errors.ts), never with HTTP library objects.
 *
 * Two implementations share everything but the wire: {@link UndiciTransport} (undici `Pool`,
 * the default) and {@link NodeHttpTransport} (node:https agents). bench/apiclient.ts measures
 * both in one run; docs/api-client.md has the numbers and why undici is the default.
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';
import { AgentError, delay, errCode, isAbortError, linkAbort, type Logger, noopLogger } from '@nodelet/base';
import { errorFromResponse, errorFromSocket, retryAfterHeaderSeconds } from './errors.js';

export interface TransportOptions {
  /** `https://host:port` or `http://host:port`, optionally with a path prefix. */
  server: string;
  /** Bearer token sent as `Authorization: Bearer …`. */
  token?: string;
  /** File holding the bearer token; re-read every minute so rotated tokens are picked up. */
  tokenFile?: string;
  /** PEM CA bundle that signs the server's certificate. */
  ca?: string | Buffer;
  /** PEM client certificate and key (mTLS). */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Skips server certificate verification (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** Default timeout per request in ms (until the whole body of a non-streaming reply arrived). Default 30 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** Max concurrent sockets to the server (each watch holds one). Default 64. */
  maxSockets?: number;
  /** `undici` (default) or `node` (node:https agents). */
  http?: 'undici' | 'node';
  /**
   * How often a request answered 429 with a `Retry-After` header is sent again, after the seconds
   * the header gives (client-go's default: 10), as long as the wait ends within the request's
   * timeout. 0: never; the 429 is thrown at once.
   */
  maxRetries?: number;
  logger?: Logger;
}

/** Response headers, lower-case names (node:http's and undici's shapes agree). */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** What an implementation hands back once the response headers arrived. */
interface SentResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: Readable;
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** Overrides the default timeout; for streams it bounds only the wait for response headers. */
  timeoutMs?: number;
}

export interface RawResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: Buffer;
}

const TOKEN_FILE_TTL_MS = 60_000;

/**
 * Longest time an idle keep-alive connection to the server stays open on the client side: above
 * the agent's 10 s Lease renew period, well below the servers' 90 s (api/src/serving/harden.ts).
 */
const CLIENT_IDLE_KEEP_ALIVE_MS = 15_000;

/**
 * undici's `Pool` and its `request()` alone. `import { Pool } from 'undici'` evaluates the whole
 * package — fetch, WebSocket, EventSource, the cache and mock agents — which costs every process
 * that talks to the API server ~3 MiB of heap and ~8 MiB of RSS for code it never runs
 * (docs/performance.md, "Agent footprint"). These are the two files undici's index exports as
 * `Pool` and mixes into every dispatcher as `request`; the transport tests (api-client.test.ts,
 * tls.test.ts) fail at once if an upgrade moves them.
 */
const requireUndici = createRequire(import.meta.url);
const Pool = requireUndici('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
const poolRequest = requireUndici('undici/lib/api/api-request.js') as (this: UndiciPool, o: Parameters<UndiciPool['request']>[0]) => ReturnType<UndiciPool['request']>;

/** What the `nodelet:api:request` diagnostics channel publishes after every request (for metrics, tracing). */
export interface RequestDiagnostic {
  method: string;
  path: string;
  /** HTTP status, or undefined when no reply arrived. */
  statusCode?: number;
  /** Error code when the request failed (`ERR_UNAVAILABLE`, …; `AbortError` when aborted). */
  error?: string;
  /** Until the whole body (request) or the response headers (stream) arrived. */
  durationMs: number;
  stream: boolean;
}

/** Subscribe with `diagnostics_channel.subscribe('nodelet:api:request', fn)`; no cost without subscribers. */
export const requestChannel = diagnostics.channel('nodelet:api:request');

/** Picks the implementation named by `opts.http` (undici unless told otherwise). */
export function createTransport(opts: TransportOptions): Transport {
  return opts.http === 'node' ? new NodeHttpTransport(opts) : new UndiciTransport(opts);
}

export abstract class Transport {
  readonly server: URL;
  readonly #opts: TransportOptions;
  readonly #log: Logger;
  #fileToken: { value: string; readAt: number } | undefined;
  #staticToken: string | undefined;
  #closed = false;

  constructor(opts: TransportOptions) {
    this.server = new URL(opts.server);
    if (this.server.protocol !== 'https:' && this.server.protocol !== 'http:') {
      throw new AgentError('ERR_INVALID_ARGUMENT', `unsupported API server URL "${opts.server}": use https:// or http://`);
    }
    this.#opts = opts;
    this.#staticToken = opts.token;
    this.#log = opts.logger ?? noopLogger;
  }

  /** Sends one request on the wire; resolves when the response headers arrived. */
  protected abstract send(method: string, url: URL, headers: Record<string, string>, payload: Buffer | undefined, signal: AbortSignal): Promise<SentResponse>;
  /** Closes every connection (in-flight requests fail). */
  protected abstract destroy(): void;

  /** Sends a request and buffers the reply. Non-2xx replies throw ApiStatusError. */
  async request(o: RequestOptions): Promise<RawResponse> {
    const timeoutMs = o.timeoutMs ?? this.#opts.timeoutMs ?? 30_000;
    const link = linkAbort(o.signal, timeoutMs);
    const started = performance.now();
    let statusCode: number | undefined;
    try {
      for (let retries = 0; ; retries++) {
        const res = await this.#send(o, link.signal);
        statusCode = res.statusCode;
        const body = await readAll(res.body);
        const wait = retries < (this.#opts.maxRetries ?? DEFAULT_MAX_RETRIES) ? retryAfterMs(res) : undefined;
        // A wait that would outlast the request's deadline is not started: the caller gets the 429
        // (and its retryAfterSeconds) instead of a timeout that hides why.
        if (wait === undefined || performance.now() + wait >= started + timeoutMs) {
          const out = this.#check(o, res, body);
          this.#publish(o, started, false, statusCode);
          return out;
        }
        // The server shed the request (max in flight) and said when to come back: come back then,
        // within the request's own deadline, as client-go does, instead of failing the caller.
        this.#log.debug({ path: o.path, retries: retries + 1, waitMs: wait }, 'API server asked to retry later (429)');
        await delay(wait, link.signal);
      }
    } catch (err) {
      const translated = this.#translate(err, o, link.signal, timeoutMs);
      this.#publish(o, started, false, statusCode, translated);
      throw translated;
    } finally {
      link.dispose();
    }
  }

  #publish(o: RequestOptions, started: number, stream: boolean, statusCode?: number, err?: unknown): void {
    if (!requestChannel.hasSubscribers) return;
    const d: RequestDiagnostic = { method: o.method, path: o.path, durationMs: performance.now() - started, stream };
    if (statusCode !== undefined) d.statusCode = statusCode;
    if (err !== undefined) d.error = errCode(err) ?? (isAbortError(err) ? 'AbortError' : 'unknown');
    requestChannel.publish(d);
  }

  /**
   * Sends a request and returns the reply body as a stream (watch, `pods/log?follow=true`).
   * The timeout covers only the wait for headers; aborting `signal` destroys the stream.
   * The caller must consume or destroy the stream.
   */
  async stream(o: RequestOptions): Promise<{ statusCode: number; headers: ResponseHeaders; body: Readable }> {
    const timeoutMs = o.timeoutMs ?? this.#opts.timeoutMs ?? 30_000;
    const headerLink = linkAbort(o.signal, timeoutMs);
    // A second link, without timeout, owns the long-lived body.
    const bodyLink = linkAbort(o.signal);
    headerLink.signal.addEventListener('abort', () => bodyLink.controller.abort(headerLink.signal.reason), { once: true });
    const started = performance.now();
    let statusCode: number | undefined;
    try {
      const res = await this.#send(o, bodyLink.signal);
      headerLink.dispose();
      statusCode = res.statusCode;
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const body = await readAll(res.body);
        this.#check(o, res, body);
      }
      res.body.once('close', () => bodyLink.dispose());
      this.#publish(o, started, true, statusCode);
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    } catch (err) {
      bodyLink.dispose();
      const translated = this.#translate(err, o, headerLink.signal, timeoutMs);
      this.#publish(o, started, true, statusCode, translated);
      throw translated;
    } finally {
      headerLink.dispose();
    }
  }

  /** Replaces the bearer token for requests from now on (a rotated credential); wins over `tokenFile`. */
  setToken(token: string): void {
    this.#staticToken = token;
  }

  /** Forgets the cached `tokenFile` content, so the next request reads the file again. */
  reloadToken(): void {
    this.#fileToken = undefined;
  }

  /** Destroys every connection; in-flight requests and streams fail. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.destroy();
  }

  async #send(o: RequestOptions, signal: AbortSignal): Promise<SentResponse> {
    if (this.#closed) throw new AgentError('ERR_FAILED_PRECONDITION', 'API client is closed');
    signal.throwIfAborted();
    const url = this.#url(o.path, o.query);
    const headers: Record<string, string> = {
      Accept: o.accept ?? 'application/json',
      'User-Agent': this.#opts.userAgent ?? 'nodelet/0.1',
    };
    const token = await this.#token();
    if (token) headers.Authorization = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (o.body !== undefined) {
      payload = Buffer.isBuffer(o.body) ? o.body : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return this.send(o.method, url, headers, payload, signal);
  }

  #check(o: RequestOptions, res: SentResponse, body: Buffer): RawResponse {
    const statusCode = res.statusCode;
    if (statusCode < 200 || statusCode >= 300) {
      throw errorFromResponse(statusCode, body.toString('utf8'), `${o.method} ${o.path}`, res.headers['retry-after']);
    }
    return { statusCode, headers: res.headers, body };
  }

  #translate(err: unknown, o: RequestOptions, signal: AbortSignal, timeoutMs: number): unknown {
    if (err instanceof AgentError) return err;
    if (o.signal?.aborted) return o.signal.reason instanceof Error ? o.signal.reason : err;
    if (signal.aborted) {
      return new AgentError('ERR_DEADLINE_EXCEEDED', `${o.method} ${o.path}: no reply from API server ${this.server.origin} within ${timeoutMs} ms`, { cause: err });
    }
    if (isAbortError(err)) return err;
    this.#log.debug({ err, path: o.path }, 'API request failed');
    return errorFromSocket(err, `${o.method} ${o.path}`, this.server.origin);
  }

  #url(path: string, query: RequestOptions['query']): URL {
    const prefix = this.server.pathname.replace(/\/$/, '');
    const url = new URL(prefix + path, this.server.origin);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    return url;
  }

  async #token(): Promise<string | undefined> {
    if (this.#staticToken) return this.#staticToken;
    const file = this.#opts.tokenFile;
    if (!file) return undefined;
    const now = Date.now();
    if (this.#fileToken && now - this.#fileToken.readAt < TOKEN_FILE_TTL_MS) return this.#fileToken.value;
    try {
      const value = (await readFile(file, 'utf8')).trim();
      this.#fileToken = { value, readAt: now };
      return value;
    } catch (err) {
      throw new AgentError('ERR_UNAUTHENTICATED', `cannot read token file "${file}"`, { cause: err });
    }
  }
}

async function readAll(res: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** client-go's default number of retries of a request the server answered 429 + `Retry-After` (rest.Request maxRetries). */
const DEFAULT_MAX_RETRIES = 10;

/**
 * The wait a 429 reply asks for, in ms; undefined when it is not a 429 or carries no whole-second
 * `Retry-After` (client-go's checkWait: then the 429 is the caller's error). client-go also
 * retries a 5xx that carries the header; here a 5xx goes to the caller, whose own retry (or the
 * failover transport) decides.
 */
function retryAfterMs(res: SentResponse): number | undefined {
  if (res.statusCode !== 429) return undefined;
  const seconds = retryAfterHeaderSeconds(res.headers['retry-after']);
  return seconds === undefined ? undefined : seconds * 1000;
}

/** node:https (or http) with a keep-alive agent. */
export class NodeHttpTransport extends Transport {
  readonly #agent: http.Agent;

  constructor(opts: TransportOptions) {
    super(opts);
    const common = { keepAlive: true, maxSockets: opts.maxSockets ?? 64 };
    this.#agent =
      this.server.protocol === 'https:'
        ? new https.Agent({ ...common, ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: !opts.insecureSkipTlsVerify })
        : new http.Agent(common);
  }

  protected send(method: string, url: URL, headers: Record<string, string>, payload: Buffer | undefined, signal: AbortSignal): Promise<SentResponse> {
    const mod = this.server.protocol === 'https:' ? https : http;
    return new Promise<SentResponse>((resolve, reject) => {
      const req = mod.request(url, { method, headers, agent: this.#agent, signal }, (res) => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res }));
      req.once('error', reject);
      req.end(payload);
    });
  }

  protected destroy(): void {
    this.#agent.destroy();
  }
}

/**
 * undici `Pool`: up to `maxSockets` keep-alive connections to the one server, no pipelining
 * (a watch holds its connection for minutes; pipelining behind it would stall).
 */
export class UndiciTransport extends Transport {
  readonly #pool: UndiciPool;

  constructor(opts: TransportOptions) {
    super(opts);
    this.#pool = new Pool(this.server.origin, {
      connections: opts.maxSockets ?? 64,
      pipelining: 1,
      // Our own timeouts (RequestOptions.timeoutMs, the watch deadline) govern; undici's
      // defaults (5 min body/headers) would cut long watches and log follows.
      headersTimeout: 0,
      bodyTimeout: 0,
      // An idle connection is kept for the server's `Keep-Alive: timeout=` hint less 2 s, at most
      // CLIENT_IDLE_KEEP_ALIVE_MS. The cap keeps the connection an agent uses every 10 s (Lease
      // renewals) and closes the extra ones a burst of requests opened soon after the burst,
      // so they do not count against the agent's open descriptors for the server's full 90 s.
      keepAliveMaxTimeout: CLIENT_IDLE_KEEP_ALIVE_MS,
      // One TLS context for every connection: given `ca`/`cert`/`key`, tls.connect would parse
      // the PEMs into a fresh context per connection, which is most of a connect's CPU.
      connect: this.server.protocol === 'https:'
        ? { secureContext: tls.createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }), rejectUnauthorized: !opts.insecureSkipTlsVerify }
        : {},
    });
  }

  protected async send(method: string, url: URL, headers: Record<string, string>, payload: Buffer | undefined, signal: AbortSignal): Promise<SentResponse> {
    const res = await poolRequest.call(this.#pool, { method: method as 'GET', path: url.pathname + url.search, headers, body: payload, signal });
    return { statusCode: res.statusCode, headers: res.headers as ResponseHeaders, body: res.body };
  }

  protected destroy(): void {
    void this.#pool.destroy().catch(() => undefined); // closing the pool: a failure has nobody left to tell
  }
}
