/**
 * A watch over a WebSocket, as kube-apiserver serves a watch request carrying `Upgrade: websocket`
 * (wsstream.IsWebSocketRequest, then WatchServer.HandleWS). It runs after the same filters as any
 * upgrade (authentication — the token may ride as a subprotocol —, audit, authorization as
 * `watch`), so a refused user gets the 403 before the handshake; then handlers/watch.ts serves it:
 * selectors, resourceVersion, bookmarks, timeouts and the watch cache as over HTTP. Only the
 * framing differs:
 *
 * - one event per message. JSON as a text message holding the same bytes as the HTTP stream's
 *   line (upstream's JSON encoder ends each event with a newline too); protobuf as a binary
 *   message holding the WatchEvent without the 4-byte length (the message carries the length);
 * - an expired resourceVersion is the ERROR event (410 Expired Status), then the close;
 * - whatever the client sends is ignored (upstream reads and drops it); its close ends the watch;
 * - the server's end (timeoutSeconds, an ERROR event, shutdown) is a close with 1000, as
 *   x/net/websocket's Close sends.
 *
 * The handshake is upstream's (golang.org/x/net/websocket's Handler): an Origin header is
 * required (403 without), and of the subprotocols left once authentication took out the token,
 * exactly one is echoed; several are a 400.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { RequestScope } from '../context.js';
import { badRequest, StatusError } from '../status.js';
import { PROTOBUF_WATCH_CONTENT_TYPE } from '../wire-media.js';
import { handleWatch } from './watch.js';
import { drainedOf, type WatchSink } from './watch-sink.js';

/** Hands out the handshakes; no server of its own (the API server's 'upgrade' event feeds it). */
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  // The client should send nothing: a large message is not read into memory.
  maxPayload: 64 * 1024,
  // x/net/websocket answers with the one subprotocol offered (the token protocol already taken
  // out by authentication); more than one is refused before the upgrade (serveWatchUpgrade).
  handleProtocols: (offered) => (offered.size === 1 ? [...offered][0]! : false),
});

/**
 * The subprotocols a WebSocket watch offers, after authentication removed the token protocol.
 * Upstream's x/net/websocket echoes a single one and fails the handshake (400) on several.
 */
export function offeredProtocols(req: IncomingMessage): string[] {
  return String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The watch over a WebSocket on the upgrade's `socket`; the 101 is written by `start`. */
export function webSocketWatchSink(req: IncomingMessage, socket: Duplex, head: Buffer, onOpen: () => void = () => undefined): WatchSink {
  let ws: WebSocket | undefined;
  let binary = false;
  const closeListeners = new Set<() => void>();
  let closed = false;
  const onGone = (): void => {
    if (closed) return;
    closed = true;
    for (const f of closeListeners) f();
  };
  socket.once('close', onGone);
  return {
    start(contentType) {
      binary = contentType === PROTOBUF_WATCH_CONTENT_TYPE;
      return new Promise<void>((resolve, reject) => {
        // A handshake `ws` refuses (bad key or version) is answered 400 by it and the socket destroyed.
        const gone = (): void => reject(new Error('the client closed the connection before the WebSocket handshake'));
        socket.once('close', gone);
        wss.handleUpgrade(req, socket, head, (conn) => {
          socket.off('close', gone);
          ws = conn;
          conn.on('message', () => undefined); // ignored, as upstream does
          conn.on('error', () => conn.terminate());
          conn.once('close', onGone);
          resolve();
          onOpen();
        });
      });
    },
    write(event) {
      if (!ws || ws.readyState !== WebSocket.OPEN) return;
      if (!binary) return ws.send(event, { binary: false });
      // The length prefix is the HTTP stream's framing; a message has its own length.
      ws.send((event as Buffer).subarray(4), { binary: true });
    },
    // `ws` writes each frame to the socket as it is sent (no compression here): the socket's queue is the backlog.
    get buffered() {
      return socket.writableLength;
    },
    get needsDrain() {
      return socket.writableNeedDrain;
    },
    drained: (signal) => drainedOf(socket, signal),
    drop: () => (ws ? ws.terminate() : socket.destroy()),
    end() {
      if (ws && ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (!ws) socket.destroy();
    },
    onClose(f) {
      if (closed) {
        f();
        return () => undefined;
      }
      closeListeners.add(f);
      return () => void closeListeners.delete(f);
    },
  };
}

/**
 * Serves a WebSocket watch on an authorized upgrade of a collection's `?watch=true`: resolves once
 * the 101 is written (the audit's ResponseStarted), the watch going on until either side ends it;
 * throws what would refuse it before the handshake (a bad selector, timeoutSeconds), which the
 * upgrade chain writes to the socket as a Status.
 */
export async function serveWatchUpgrade(s: RequestScope, socket: Duplex, head: Buffer): Promise<void> {
  if (String(s.req.headers.upgrade ?? '').toLowerCase() !== 'websocket') throw badRequest(`a watch can be upgraded to a WebSocket only, not "${String(s.req.headers.upgrade)}"`);
  if (!s.req.headers.origin) throw new StatusError(403, 'Forbidden', 'a WebSocket watch needs an Origin header');
  const protocols = offeredProtocols(s.req);
  if (protocols.length > 1) throw badRequest(`a WebSocket watch takes at most one subprotocol besides the bearer token, got ${protocols.length}`);
  let opened!: () => void;
  const started = new Promise<void>((resolve) => (opened = resolve));
  const run = handleWatch(s, webSocketWatchSink(s.req, socket, head, opened));
  run.catch((err: unknown) => s.log.debug({ err }, 'WebSocket watch ended before its handshake'));
  await Promise.race([started, run]);
}
