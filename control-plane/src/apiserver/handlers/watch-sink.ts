/**
 * Where a watch's events go (handlers/watch.ts): a chunked HTTP response here, or a WebSocket
 * (watch-websocket.ts). Only the transport differs; the watch itself is one implementation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** The transport of one watch. */
export interface WatchSink {
  /** Opens the stream: the 200 head, or the WebSocket handshake's 101 (rejects if the client left first). */
  start(contentType: string): Promise<void>;
  /** One encoded event, as watch-encoding.ts makes it for the HTTP stream. */
  write(event: Buffer | string): void;
  /** Bytes written but not yet taken by the client's connection. */
  readonly buffered: number;
  /** True when the caller should wait for {@link drained} before writing more. */
  readonly needsDrain: boolean;
  /** Resolves once the connection drains, closes, or `signal` aborts. */
  drained(signal: AbortSignal): Promise<void>;
  /** Drops the connection at once (an unresponsive watcher). */
  drop(): void;
  /** Ends the stream cleanly (idempotent). */
  end(): void;
  /** Calls `f` once the client is gone (at once if it already is); returns the unsubscriber. */
  onClose(f: () => void): () => void;
}

/** The watch over a chunked HTTP response. */
export function httpWatchSink(req: IncomingMessage, res: ServerResponse): WatchSink {
  return {
    start(contentType) {
      res.writeHead(200, { 'Content-Type': contentType, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
      res.flushHeaders();
      return Promise.resolve();
    },
    write: (event) => void res.write(event),
    get buffered() {
      return res.writableLength;
    },
    get needsDrain() {
      return res.writableNeedDrain;
    },
    drained: (signal) => drainedOf(res, signal),
    drop: () => void res.destroy(),
    end: () => void (res.writableEnded || res.end()),
    onClose(f) {
      req.on('close', f);
      return () => void req.off('close', f);
    },
  };
}

/** Resolves once `stream` drains, closes, or `signal` aborts. */
export function drainedOf(stream: ServerResponse | Duplex, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    if (signal.aborted || stream.destroyed) return resolve();
    stream.once('drain', done);
    stream.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
