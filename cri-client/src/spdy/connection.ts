/**
 * A SPDY/3.1 session over any byte stream (a TCP or TLS socket after an HTTP `Upgrade: SPDY/3.1`),
 * client or server side, with each SPDY stream a Node `Duplex`:
 *
 *   createStream(headers) ─SYN_STREAM─▶            peer replies SYN_REPLY ─▶ promise resolves
 *   stream.write(b)       ─DATA…────────▶          DATA ─▶ stream 'data'
 *   stream.end()          ─DATA(FIN)────▶ half-closed (local)   DATA(FIN) ─▶ stream 'end'
 *   stream.destroy()      ─RST_STREAM(CANCEL)─▶    RST_STREAM ─▶ data so far, then 'end' (resetStatus set)
 *   close()               ─GOAWAY─▶ socket ends once every stream is closed both ways
 *
 * Flow control, both ways bounded:
 * - Receiving: a stream whose consumer does not keep up (its readable buffer is past the high-water
 *   mark) pauses the socket, so TCP pushes back on the peer.
 * - Sending: a write completes when the socket has room (`drain`).
 * - SPDY/3.1 windows (stream and connection) only with `flowControl`: we then stop at the peer's
 *   window and send WINDOW_UPDATEs as our consumers read. Off by default, because Kubernetes' SPDY
 *   peers (moby/spdystream in kubectl, kubelet and containerd) neither send nor read
 *   WINDOW_UPDATE: counting down their 64 KiB window would stall every stream after 64 KiB, and
 *   updates we send are bytes they never read, so their final close() turns into a TCP reset that
 *   discards the command's last output still in flight to us (seen against containerd 1.6).
 *   Against them TCP is the flow control, as for spdystream itself.
 *
 * PINGs from the peer are answered; SETTINGS_INITIAL_WINDOW_SIZE is applied; unknown control frames
 * are ignored (§2.2.1); a malformed frame ends the session with GOAWAY(PROTOCOL_ERROR).
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { AgentError, abortError } from '@nodelet/base';
import { dataFrameHeader, encodeFrame, FrameReader, GoAwayStatus, HeaderCodec, RstStatus, SETTINGS_INITIAL_WINDOW_SIZE, type Frame, type SpdyHeadersInit } from './frames.js';
import { normalize, SpdyStream, type StreamHost } from './stream.js';

export { SpdyStream } from './stream.js';

const RST_NAMES = Object.fromEntries(Object.entries(RstStatus).map(([k, v]) => [v, k]));

/** SPDY/3.1's initial window, stream and connection (§2.6.8). */
export const DEFAULT_WINDOW = 64 * 1024;
/** Largest DATA frame we send; kubelet and kubectl copy in 32 KiB buffers too. */
const MAX_DATA_FRAME = 32 * 1024;

export interface SpdyConnectionOptions {
  /** Server side: even stream and ping ids. Default: client (odd ids). */
  isServer?: boolean;
  /** SPDY/3.1 window flow control, both ways (see the module comment). Default false. */
  flowControl?: boolean;
  /** Readable high-water mark of each stream (bytes buffered before the socket is paused). Default 256 KiB. */
  streamHighWaterMark?: number;
}

export interface CreateStreamOptions {
  signal?: AbortSignal;
  /** Send SYN_STREAM with FIN: we will not write on this stream. */
  fin?: boolean;
}

/**
 * Events: `stream` (SpdyStream the peer opened; call `reply()`), `goaway` ({ lastGoodStreamId, status }),
 * `close` (the socket closed; every stream is finished by then).
 */
export class SpdyConnection extends EventEmitter implements StreamHost {
  /** @internal */ readonly codec = new HeaderCodec();
  readonly #socket: Duplex;
  readonly #reader: FrameReader;
  readonly #streams = new Map<number, SpdyStream>();
  readonly #blocked = new Set<SpdyStream>();
  readonly #honor: boolean;
  readonly #hwm: number;
  readonly #isServer: boolean;
  #nextStreamId: number;
  #lastPeerStreamId = 0;
  #peerInitialWindow = DEFAULT_WINDOW;
  #connSendWindow = DEFAULT_WINDOW;
  #connRecvUnacked = 0;
  #waiters: (() => void)[] = [];
  #goneAway = false;
  #closing = false;
  #closed = false;

  constructor(socket: Duplex, opts: SpdyConnectionOptions = {}) {
    super();
    this.#socket = socket;
    this.#reader = new FrameReader(this.codec);
    this.#honor = !!opts.flowControl;
    this.#hwm = opts.streamHighWaterMark ?? 256 * 1024;
    this.#isServer = !!opts.isServer;
    this.#nextStreamId = this.#isServer ? 2 : 1;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('drain', () => this.#wake());
    socket.on('end', () => this.#onSocketGone());
    socket.on('error', (err: Error) => this.#onSocketGone(err));
    socket.on('close', () => this.#onSocketGone());
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** Streams open in either direction. */
  get streamCount(): number {
    return this.#streams.size;
  }

  /**
   * Opens a stream and waits for the peer's SYN_REPLY (Kubernetes servers drop DATA that arrives
   * before they replied). Rejects with ERR_UNAVAILABLE on RST_STREAM, GOAWAY or a closed
   * connection, and with AbortError when `signal` fires (the stream is then reset).
   */
  async createStream(headers: SpdyHeadersInit, opts: CreateStreamOptions = {}): Promise<SpdyStream> {
    if (opts.signal?.aborted) throw abortError(opts.signal.reason);
    if (this.#closed || this.#goneAway || this.#closing) throw new AgentError('ERR_UNAVAILABLE', 'spdy: the connection is closing; no new streams');
    const id = this.#nextStreamId;
    this.#nextStreamId += 2;
    const stream = new SpdyStream(this, id, {}, this.#peerInitialWindow, this.#hwm);
    this.#streams.set(id, stream);
    const replied = new Promise<void>((resolve, reject) => (stream.replied = { resolve, reject }));
    this.sendFrame(encodeFrame({ type: 'syn_stream', streamId: id, associatedId: 0, priority: 0, fin: !!opts.fin, unidirectional: false, headers: normalize(headers) }, this.codec));
    if (opts.fin) stream.markLocalFin();
    const onAbort = (): void => {
      stream.replied?.reject(abortError(opts.signal?.reason));
      stream.destroy();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // Until the caller has the stream, a failure is the rejection, not an 'error' event nobody hears.
    const swallow = (): void => {};
    stream.on('error', swallow);
    try {
      await replied;
    } catch (err) {
      stream.destroy();
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      stream.off('error', swallow);
      stream.replied = undefined;
    }
    return stream;
  }

  /** Graceful close: GOAWAY now, end the socket once every stream has closed both ways. Idempotent. */
  close(): void {
    if (this.#closing || this.#closed) return;
    this.#closing = true;
    this.sendFrame(encodeFrame({ type: 'goaway', lastGoodStreamId: this.#lastPeerStreamId, status: GoAwayStatus.OK }));
    if (this.#streams.size === 0) this.#socket.end();
  }

  /** Ends everything now. Idempotent. */
  destroy(err?: Error): void {
    this.#socket.destroy(err);
    this.#onSocketGone(err);
  }

  /** @internal */
  sendFrame(frame: Buffer): boolean {
    if (this.#closed || this.#socket.destroyed || this.#socket.writableEnded) return false;
    return this.#socket.write(frame);
  }

  /** @internal DATA frames for `chunk`; `cb` once the socket (and, if honoured, the peer's window) took it all. */
  sendData(stream: SpdyStream, chunk: Buffer, cb: (err?: Error | null) => void): void {
    let at = 0;
    const step = (): void => {
      while (at < chunk.length) {
        if (this.#closed || stream.localFin) return cb();
        let n = Math.min(chunk.length - at, MAX_DATA_FRAME);
        if (this.#honor) n = Math.min(n, stream.sendWindow, this.#connSendWindow);
        if (n <= 0) {
          this.#waiters.push(step);
          return;
        }
        const piece = chunk.subarray(at, at + n);
        at += n;
        stream.sendWindow -= n;
        this.#connSendWindow -= n;
        this.#socket.cork();
        this.sendFrame(dataFrameHeader(stream.id, false, n));
        this.sendFrame(piece);
        this.#socket.uncork();
      }
      if (this.#socket.writableNeedDrain && !this.#closed) this.#waiters.push(() => cb());
      else cb();
    };
    step();
  }

  /** @internal the consumer of `stream` wants more: unpause the socket, hand out window. */
  streamWantsData(stream: SpdyStream): void {
    if (this.#honor && stream.recvUnacked >= DEFAULT_WINDOW / 2 && !stream.remoteFin) {
      this.sendFrame(encodeFrame({ type: 'window_update', streamId: stream.id, delta: stream.recvUnacked }));
      stream.recvUnacked = 0;
    }
    if (this.#blocked.delete(stream) && this.#blocked.size === 0) this.#resume();
  }

  /** @internal */
  maybeForget(stream: SpdyStream): void {
    if (stream.localFin && stream.remoteFin) this.forget(stream);
  }

  /** @internal */
  forget(stream: SpdyStream): void {
    if (this.#streams.get(stream.id) !== stream) return;
    this.#streams.delete(stream.id);
    if (this.#blocked.delete(stream) && this.#blocked.size === 0) this.#resume();
    if (this.#closing && this.#streams.size === 0 && !this.#socket.writableEnded) this.#socket.end();
  }

  #resume(): void {
    if (this.#honor && this.#connRecvUnacked >= DEFAULT_WINDOW / 2) {
      this.sendFrame(encodeFrame({ type: 'window_update', streamId: 0, delta: this.#connRecvUnacked }));
      this.#connRecvUnacked = 0;
    }
    if (!this.#closed) this.#socket.resume();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  #onData(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.#reader.push(chunk);
    } catch (err) {
      this.sendFrame(encodeFrame({ type: 'goaway', lastGoodStreamId: this.#lastPeerStreamId, status: GoAwayStatus.PROTOCOL_ERROR }));
      this.destroy(err as Error);
      return;
    }
    for (const f of frames) {
      if (this.#closed) return;
      this.#handle(f);
    }
    if (this.#honor && this.#blocked.size === 0 && this.#connRecvUnacked >= DEFAULT_WINDOW / 2) this.#resume();
  }

  #handle(f: Frame): void {
    switch (f.type) {
      case 'data': {
        this.#connRecvUnacked += f.data.length;
        const s = this.#streams.get(f.streamId);
        if (!s || s.remoteFin) return; // reset or finished on our side: spdystream drops these too
        if (f.data.length) {
          s.recvUnacked += f.data.length;
          if (!s.push(f.data)) {
            this.#blocked.add(s);
            this.#socket.pause();
          }
        }
        if (f.fin) this.#remoteFin(s);
        return;
      }
      case 'syn_stream':
        return this.#onSynStream(f);
      case 'syn_reply':
      case 'headers': {
        const s = this.#streams.get(f.streamId);
        if (!s) return;
        s.headers = { ...s.headers, ...f.headers };
        if (f.type === 'syn_reply') s.replied?.resolve();
        if (f.fin) this.#remoteFin(s);
        return;
      }
      case 'rst_stream': {
        const s = this.#streams.get(f.streamId);
        if (!s) return;
        s.resetByPeer = true;
        s.resetStatus = f.status;
        const err = new AgentError('ERR_UNAVAILABLE', `spdy: stream ${f.streamId} reset by the peer (${RST_NAMES[f.status] ?? f.status})`);
        if (s.replied) return void s.destroy(err);
        // kubelet and containerd reset every stream when a command ends, right after its last
        // output: what arrived before the reset is delivered, then the stream ends both ways.
        s.markLocalFin();
        this.#remoteFin(s);
        return;
      }
      case 'settings':
        for (const e of f.entries) {
          if (e.id !== SETTINGS_INITIAL_WINDOW_SIZE) continue;
          const delta = e.value - this.#peerInitialWindow;
          this.#peerInitialWindow = e.value;
          for (const s of this.#streams.values()) s.sendWindow += delta;
        }
        this.#wake();
        return;
      case 'ping':
        // Ours are odd on the client, even on the server; answer the peer's.
        if (f.id % 2 === (this.#isServer ? 1 : 0)) this.sendFrame(encodeFrame({ type: 'ping', id: f.id }));
        return;
      case 'goaway':
        this.#goneAway = true;
        this.emit('goaway', { lastGoodStreamId: f.lastGoodStreamId, status: f.status });
        return;
      case 'window_update':
        if (f.streamId === 0) this.#connSendWindow += f.delta;
        else {
          const s = this.#streams.get(f.streamId);
          if (s) s.sendWindow += f.delta;
        }
        this.#wake();
        return;
      case 'unknown':
        return;
    }
  }

  #onSynStream(f: Extract<Frame, { type: 'syn_stream' }>): void {
    const rst = (status: number): void => void this.sendFrame(encodeFrame({ type: 'rst_stream', streamId: f.streamId, status }));
    const peerParity = this.#isServer ? 1 : 0;
    if (f.streamId % 2 !== peerParity || f.streamId <= this.#lastPeerStreamId) return rst(RstStatus.PROTOCOL_ERROR);
    this.#lastPeerStreamId = f.streamId;
    if (this.#closing) return rst(RstStatus.REFUSED_STREAM);
    const s = new SpdyStream(this, f.streamId, f.headers, this.#peerInitialWindow, this.#hwm);
    this.#streams.set(f.streamId, s);
    if (f.unidirectional) s.markLocalFin();
    if (f.fin) this.#remoteFin(s);
    if (this.listenerCount('stream') === 0) return s.reset(RstStatus.REFUSED_STREAM);
    this.emit('stream', s);
  }

  #remoteFin(s: SpdyStream): void {
    if (s.remoteFin) return;
    s.remoteFin = true;
    s.push(null);
    this.maybeForget(s);
  }

  #onSocketGone(err?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of [...this.#streams.values()]) {
      s.replied?.reject(err ?? new AgentError('ERR_UNAVAILABLE', 'spdy: connection closed before the stream was accepted'));
      s.markLocalFin();
      if (err && !this.#goneAway) {
        s.resetByPeer = true;
        s.destroy(new AgentError('ERR_UNAVAILABLE', `spdy: connection failed: ${err.message}`, { cause: err }));
      } else {
        // A peer that closes TCP (or resets it after GOAWAY) ends its streams; what it sent is still delivered.
        this.#remoteFin(s);
        this.forget(s);
      }
    }
    this.#blocked.clear();
    this.#wake();
    if (!this.#socket.destroyed) this.#socket.destroy();
    queueMicrotask(() => this.emit('close', err));
  }
}
