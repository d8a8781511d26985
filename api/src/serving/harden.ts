/**
 * The edge of an HTTP(S) server that faces untrusted clients: size and time bounds on reading a
 * request, and a Kubernetes `Status` reply (never a silently dropped connection) for requests
 * the HTTP parser rejects or the server does not route:
 *
 *   request line or headers malformed   400 BadRequest            (llhttp parse error)
 *   headers over maxHeaderSize          431 RequestEntityTooLarge
 *   headers/body not received in time   408 Timeout               (headersTimeout, requestTimeout)
 *   CONNECT                             405 MethodNotAllowed
 *   Expect: other than 100-continue     417 BadRequest
 *
 * A TLS handshake that fails (garbage, truncation) has no HTTP to answer in; Node closes it.
 *
 * Connections closed after a reply linger (see {@link lingerOnClose}) so that a client still
 * sending a rejected body reads the reply instead of a TCP reset.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { failureStatus, LINGER_MS, writeRawStatus } from './raw-reply.js';

export interface EdgeLimits {
  /** Longest request line + headers, bytes (Node's default is 16 KiB). */
  maxHeaderBytes: number;
  /** Time to receive the request line and headers. */
  headersTimeoutMs: number;
  /**
   * Time to receive the whole request, body included (not the response: a watch or a log
   * follow streams its reply for as long as it likes). At least `headersTimeoutMs`.
   */
  requestTimeoutMs: number;
}

/** How long an edge server keeps an idle keep-alive connection (kube-apiserver's 90 s). */
const IDLE_KEEP_ALIVE_MS = 90_000;

export const DEFAULT_EDGE_LIMITS: EdgeLimits = { maxHeaderBytes: 64 * 1024, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };

/**
 * Options for `http(s).createServer` that apply `limits`. A TLS handshake gets the headers
 * timeout too (Go's servers bound it by their header timeout; Node's default is 120 s).
 */
export function edgeServerOptions(limits: EdgeLimits): ServerOptions & { handshakeTimeout: number } {
  const headersTimeout = limits.headersTimeoutMs;
  return {
    handshakeTimeout: headersTimeout,
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout,
    requestTimeout: Math.max(limits.requestTimeoutMs, headersTimeout),
    // Node checks both timeouts on this period (default 30 s, which would let a slow client
    // hold a connection half again as long as the timeout says).
    connectionsCheckingInterval: Math.min(5000, Math.max(50, Math.floor(headersTimeout / 4))),
    // An idle keep-alive connection stays open 90 s, as kube-apiserver's and the kubelet's
    // servers keep theirs (Go's IdleTimeout there, the same as Go's client-side IdleConnTimeout);
    // Node's default 5 s closed the connection between two of an agent's Lease renewals (every
    // 10 s), so each renewal paid a TLS handshake on both ends. Node announces it in
    // `Keep-Alive: timeout=90`; how long a client keeps its own idle connections is its choice
    // (the API client keeps them 15 s: api/src/client/transport.ts).
    keepAliveTimeout: IDLE_KEEP_ALIVE_MS,
  };
}

/**
 * The accept queue a listener asks for (`server.listen({ backlog })`): the kernel's
 * `net.core.somaxconn`, as Go's net package gives kube-apiserver's and kubelet's listeners,
 * instead of Node's 511. Many clients connecting at once while the event loop is busy (100 nodes
 * opening connections for their pods' status, tokens and events) overflowed 511; each dropped
 * connection waits for its SYN to be resent 1, 3, 7 s later (docs/performance.md, "Density").
 */
export function listenBacklog(): number {
  try {
    const n = Number.parseInt(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'), 10);
    if (Number.isInteger(n) && n > 0) return Math.min(n, 0x7fffffff);
  } catch {
    // No /proc (not Linux): Node's default below.
  }
  return 511;
}

const answered = new WeakSet<Duplex>();

/**
 * A `clientError` listener: answers once with a `Status`, then closes. After a parse error the
 * parser fails every later chunk too, so later calls for the same socket do nothing (the socket
 * is already closing).
 */
export function answerClientError(err: NodeJS.ErrnoException & { reason?: string }, socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  // HACK(node internals): `_httpMessage` is the response in progress on this socket; once its
  // head is out, another status line would corrupt the stream, so the socket is only closed (as
  // Node's own clientError default does).
  const inflight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inflight?.headersSent) {
    socket.destroy();
    return;
  }
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      writeRawStatus(socket, failureStatus(431, 'RequestEntityTooLarge', 'request header fields too large'));
      return;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      writeRawStatus(socket, failureStatus(408, 'Timeout', 'the request was not received in time'));
      return;
    default:
      writeRawStatus(socket, failureStatus(400, 'BadRequest', `malformed HTTP request: ${err.reason ?? err.code ?? 'parse error'}`));
  }
}

/**
 * Installs the replies of the table above on `server`. Node's defaults would destroy the
 * socket without a reply (CONNECT, a clientError listener that only destroys) or answer without
 * a body (417).
 */
export function hardenHttpServer(server: Server): void {
  server.on(server instanceof tls.Server ? 'secureConnection' : 'connection', lingerOnClose);
  server.on('clientError', answerClientError);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    writeRawStatus(socket, failureStatus(405, 'MethodNotAllowed', 'CONNECT is not supported'));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify(failureStatus(417, 'BadRequest', `unsupported expectation "${String(req.headers.expect)}"`));
    res.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
}

/**
 * HACK(node): after a reply that ends the connection (`Connection: close`, or an early 413),
 * Node destroys the socket as soon as the reply is flushed; a client still sending its body
 * then gets a TCP reset, and its kernel drops the reply it has not read yet. RFC 9112 §9.6 asks
 * for a staged close instead, as Go's server does: half-close, keep reading (the HTTP parser
 * discards the rest of the body), destroy once the client closes too or LINGER_MS later.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringDestroySoon(this: Socket): void {
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
  };
}
