/**
 * One SPDY stream as a Node Duplex (see connection.ts for the session around it). Readable: the
 * peer's DATA; writable: ours; `end()` half-closes with FIN, `destroy()` resets.
 */
import { Duplex } from 'node:stream';
import { AgentError } from '@nodelet/base';
import { dataFrameHeader, encodeFrame, RstStatus, type HeaderCodec, type SpdyHeaders, type SpdyHeadersInit } from './frames.js';

/** What a stream needs from its session (implemented by SpdyConnection). */
export interface StreamHost {
  readonly codec: HeaderCodec;
  readonly isClosed: boolean;
  sendFrame(frame: Buffer): boolean;
  sendData(stream: SpdyStream, chunk: Buffer, cb: (err?: Error | null) => void): void;
  streamWantsData(stream: SpdyStream): void;
  maybeForget(stream: SpdyStream): void;
  forget(stream: SpdyStream): void;
}

/** Header names lower-cased (SPDY/3 requires it), every value a list. */
export function normalize(h: SpdyHeadersInit): SpdyHeaders {
  const out: SpdyHeaders = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = typeof v === 'string' ? [v] : [...v];
  return out;
}

/** One SPDY stream. Readable: the peer's DATA; writable: ours. Half-closes with `end()`. */
export class SpdyStream extends Duplex {
  readonly id: number;
  /** Headers of the peer's SYN_STREAM (incoming) or SYN_REPLY (ours), plus any HEADERS frames. */
  headers: SpdyHeaders;
  /** @internal */ readonly conn: StreamHost;
  /** @internal */ sendWindow: number;
  /** @internal */ recvUnacked = 0;
  /** @internal */ localFin = false;
  /** @internal */ remoteFin = false;
  /** @internal */ resetByPeer = false;
  /** The RST_STREAM status the peer ended this stream with, if it did. */
  resetStatus?: number;
  /** @internal */ replied?: { resolve(): void; reject(err: Error): void };

  constructor(conn: StreamHost, id: number, headers: SpdyHeaders, sendWindow: number, highWaterMark: number) {
    super({ allowHalfOpen: true, readableHighWaterMark: highWaterMark });
    this.conn = conn;
    this.id = id;
    this.headers = headers;
    this.sendWindow = sendWindow;
  }

  /** Accepts a stream the peer opened (server side of SYN_STREAM). */
  reply(headers: SpdyHeadersInit = {}, opts: { fin?: boolean } = {}): void {
    this.conn.sendFrame(encodeFrame({ type: 'syn_reply', streamId: this.id, fin: !!opts.fin, headers: normalize(headers) }, this.conn.codec));
    if (opts.fin) this.#markLocalFin();
  }

  /** Aborts the stream both ways with RST_STREAM(status). */
  reset(status: number = RstStatus.CANCEL): void {
    if (!this.destroyed && !(this.localFin && this.remoteFin)) this.conn.sendFrame(encodeFrame({ type: 'rst_stream', streamId: this.id, status }));
    this.resetByPeer = true; // nothing more to send for it
    this.destroy();
  }

  /** @internal the write side ended without a FIN of ours (SYN with FIN, unidirectional, connection gone). */
  markLocalFin(): void {
    this.#markLocalFin();
  }

  #markLocalFin(): void {
    this.localFin = true;
    this.conn.maybeForget(this);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.localFin) return cb(); // the connection is gone: drop what kubectl still types
    this.conn.sendData(this, chunk, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (!this.localFin) {
      this.conn.sendFrame(dataFrameHeader(this.id, true, 0));
      this.#markLocalFin();
    }
    cb();
  }

  override _read(): void {
    this.conn.streamWantsData(this);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.resetByPeer && !(this.localFin && this.remoteFin) && !this.conn.isClosed) {
      this.conn.sendFrame(encodeFrame({ type: 'rst_stream', streamId: this.id, status: RstStatus.CANCEL }));
    }
    this.replied?.reject(err ?? new AgentError('ERR_UNAVAILABLE', `spdy: stream ${this.id} closed before the reply`));
    this.localFin = this.remoteFin = true;
    this.conn.forget(this);
    cb(err);
  }
}
