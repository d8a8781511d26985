/**
 * SPDY/3.1 frames on the wire (SPDY draft 3.1 §2.2–2.6): encoding, incremental parsing, and the
 * per-direction zlib header-block codec.
 *
 *   control:  |1| version(15)=3 | type(16) | flags(8) | length(24) | payload
 *   data:     |0| stream-id(31)            | flags(8) | length(24) | payload
 *
 * Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are `count(32) (len(32) name len(32) value)*`,
 * names lower-case, several values of one name joined by NUL, compressed with one zlib stream per
 * direction that lives as long as the connection, primed with {@link SPDY3_DICTIONARY} and
 * sync-flushed after every block. minizlib gives that stream a synchronous write → output, so frames
 * are decoded in order without an async queue.
 */
import { Deflate, Inflate, constants as zc } from 'minizlib';
import { AgentError } from '@nodelet/base';
import { SPDY3_DICTIONARY } from './dictionary.js';

type MiniOptions = ConstructorParameters<typeof Deflate>[0];

export const SPDY_VERSION = 3;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;
/** Largest payload one frame can carry (24-bit length). */
export const MAX_FRAME_PAYLOAD = 0xffffff;
/** Decoded header blocks larger than this end the connection (Kubernetes headers are a few dozen bytes). */
export const MAX_HEADER_BLOCK_BYTES = 256 * 1024;

export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

/** RST_STREAM status codes (§2.6.3). */
export const RstStatus = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  FRAME_TOO_LARGE: 11,
} as const;

/** GOAWAY status codes (§2.6.6). */
export const GoAwayStatus = { OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 } as const;

/** SETTINGS ids we act on (§2.6.4). */
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;

/** Header names (lower-case) to values. */
export type SpdyHeaders = Record<string, string[]>;
/** What callers pass: one value or several. */
export type SpdyHeadersInit = Readonly<Record<string, string | readonly string[]>>;

export type Frame =
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'syn_stream'; streamId: number; associatedId: number; priority: number; fin: boolean; unidirectional: boolean; headers: SpdyHeaders }
  | { type: 'syn_reply'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'headers'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; entries: { id: number; value: number; flags: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  /** A control frame type this codec does not know; the spec says to ignore it. */
  | { type: 'unknown'; frameType: number };

/** The first value of `name` (case-insensitive), or undefined. */
export function headerValue(h: SpdyHeaders, name: string): string | undefined {
  return h[name.toLowerCase()]?.[0];
}

/** A connection-fatal protocol violation (answered with GOAWAY PROTOCOL_ERROR). */
export function protocolError(message: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `spdy: ${message}`);
}

/**
 * One direction's header compression: a zlib stream primed with the SPDY/3 dictionary. Not
 * thread-safe in any sense that matters here: one per direction per connection, used in frame order.
 */
export class HeaderCodec {
  // minizlib hands its options to node:zlib, which takes `dictionary`; its typings leave it out.
  readonly #deflate = new Deflate({ dictionary: SPDY3_DICTIONARY, level: zc.Z_BEST_COMPRESSION } as MiniOptions);
  readonly #inflate = new Inflate({ dictionary: SPDY3_DICTIONARY, flush: zc.Z_SYNC_FLUSH } as MiniOptions);
  #out: Buffer[] = [];
  #in: Buffer[] = [];
  #inBytes = 0;
  #failed: Error | undefined;

  constructor() {
    this.#deflate.on('data', (c: Buffer) => this.#out.push(c));
    this.#inflate.on('data', (c: Buffer) => {
      this.#in.push(c);
      this.#inBytes += c.length;
    });
    this.#inflate.on('error', (err: unknown) => (this.#failed = err as Error));
    this.#deflate.on('error', (err: unknown) => (this.#failed = err as Error));
  }

  /** Serializes and compresses one header block (sync-flushed, so the peer can inflate it alone). */
  compress(headers: SpdyHeadersInit): Buffer {
    const entries = Object.entries(headers);
    const parts: Buffer[] = [u32(entries.length)];
    for (const [name, value] of entries) {
      const n = Buffer.from(name.toLowerCase(), 'utf8');
      const v = Buffer.from(typeof value === 'string' ? value : value.join('\0'), 'utf8');
      parts.push(u32(n.length), n, u32(v.length), v);
    }
    this.#out = [];
    this.#deflate.write(Buffer.concat(parts));
    this.#deflate.flush(zc.Z_SYNC_FLUSH);
    if (this.#failed) throw protocolError(`header compression failed: ${this.#failed.message}`);
    return Buffer.concat(this.#out);
  }

  /** Inflates and parses one header block; throws a protocol error on anything malformed. */
  decompress(block: Buffer): SpdyHeaders {
    this.#in = [];
    this.#inBytes = 0;
    if (block.length > 0) {
      try {
        this.#inflate.write(block);
      } catch (err) {
        this.#failed ??= err as Error;
      }
    }
    if (this.#failed) throw protocolError(`header block does not inflate: ${this.#failed.message}`);
    if (this.#inBytes > MAX_HEADER_BLOCK_BYTES) throw protocolError(`header block larger than ${MAX_HEADER_BLOCK_BYTES} bytes`);
    return parseHeaderBlock(Buffer.concat(this.#in));
  }
}

function parseHeaderBlock(raw: Buffer): SpdyHeaders {
  if (raw.length < 4) throw protocolError('truncated header block');
  const count = raw.readUInt32BE(0);
  let at = 4;
  const take = (): string => {
    if (at + 4 > raw.length) throw protocolError('truncated header block');
    const len = raw.readUInt32BE(at);
    at += 4;
    if (at + len > raw.length) throw protocolError('truncated header block');
    const s = raw.toString('utf8', at, at + len);
    at += len;
    return s;
  };
  const headers: SpdyHeaders = {};
  for (let i = 0; i < count; i++) {
    const name = take();
    const value = take();
    if (name === '') throw protocolError('empty header name');
    if (name !== name.toLowerCase()) throw protocolError(`header name "${name}" is not lower-case`);
    if (headers[name]) throw protocolError(`duplicate header "${name}"`);
    headers[name] = value.split('\0');
  }
  return headers;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw protocolError('control frame too large');
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([h, payload]);
}

/** The 8-byte header of a data frame; the payload follows it (written separately to avoid a copy). */
export function dataFrameHeader(streamId: number, fin: boolean, length: number): Buffer {
  if (length > MAX_FRAME_PAYLOAD) throw protocolError('data frame too large');
  const h = Buffer.alloc(8);
  h.writeUInt32BE(streamId & 0x7fffffff, 0);
  h.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | length, 4);
  return h;
}

/** Encodes `frame`; header-bearing frames go through `codec` (the sending direction's). */
export function encodeFrame(frame: Frame, codec?: HeaderCodec): Buffer {
  const block = (): Buffer => {
    if (!codec) throw new AgentError('ERR_INTERNAL', 'spdy: a header codec is needed for this frame');
    return codec.compress('headers' in frame ? frame.headers : {});
  };
  switch (frame.type) {
    case 'data':
      return Buffer.concat([dataFrameHeader(frame.streamId, frame.fin, frame.data.length), frame.data]);
    case 'syn_stream': {
      const p = Buffer.alloc(10);
      p.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(frame.associatedId & 0x7fffffff, 4);
      p.writeUInt8((frame.priority & 0x7) << 5, 8);
      const flags = (frame.fin ? FLAG_FIN : 0) | (frame.unidirectional ? FLAG_UNIDIRECTIONAL : 0);
      return control(FrameType.SYN_STREAM, flags, Buffer.concat([p, block()]));
    }
    case 'syn_reply':
    case 'headers':
      return control(frame.type === 'syn_reply' ? FrameType.SYN_REPLY : FrameType.HEADERS, frame.fin ? FLAG_FIN : 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), block()]));
    case 'rst_stream':
      return control(FrameType.RST_STREAM, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.status)]));
    case 'settings': {
      const p = Buffer.alloc(4 + 8 * frame.entries.length);
      p.writeUInt32BE(frame.entries.length, 0);
      frame.entries.forEach((e, i) => {
        p.writeUInt32BE(((e.flags & 0xff) << 24) | (e.id & 0xffffff), 4 + 8 * i);
        p.writeUInt32BE(e.value >>> 0, 8 + 8 * i);
      });
      return control(FrameType.SETTINGS, 0, p);
    }
    case 'ping':
      return control(FrameType.PING, 0, u32(frame.id));
    case 'goaway':
      return control(FrameType.GOAWAY, 0, Buffer.concat([u32(frame.lastGoodStreamId & 0x7fffffff), u32(frame.status)]));
    case 'window_update':
      return control(FrameType.WINDOW_UPDATE, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.delta & 0x7fffffff)]));
    case 'unknown':
      throw new AgentError('ERR_INTERNAL', 'spdy: cannot encode an unknown frame');
  }
}

/**
 * Splits a byte stream into frames. `push` buffers at most one incomplete frame (≤ 16 MiB + 8,
 * the protocol's own bound) and returns every frame completed by `chunk`, in order.
 */
export class FrameReader {
  readonly #codec: HeaderCodec;
  #buf: Buffer = Buffer.alloc(0);

  constructor(codec: HeaderCodec) {
    this.#codec = codec;
  }

  push(chunk: Buffer): Frame[] {
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, chunk]) : chunk;
    const frames: Frame[] = [];
    while (this.#buf.length >= 8) {
      const length = this.#buf.readUInt32BE(4) & 0xffffff;
      if (this.#buf.length < 8 + length) break;
      const head = this.#buf.subarray(0, 8);
      const payload = this.#buf.subarray(8, 8 + length);
      this.#buf = this.#buf.subarray(8 + length);
      frames.push(this.#decode(head, payload));
    }
    return frames;
  }

  #decode(head: Buffer, p: Buffer): Frame {
    const flags = head[4]!;
    if ((head[0]! & 0x80) === 0) {
      return { type: 'data', streamId: head.readUInt32BE(0) & 0x7fffffff, fin: (flags & FLAG_FIN) !== 0, data: Buffer.from(p) };
    }
    const version = head.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw protocolError(`unsupported version ${version}`);
    const type = head.readUInt16BE(2);
    const need = (n: number): void => {
      if (p.length < n) throw protocolError(`control frame ${type} too short (${p.length} bytes)`);
    };
    const fin = (flags & FLAG_FIN) !== 0;
    switch (type) {
      case FrameType.SYN_STREAM:
        need(10);
        return {
          type: 'syn_stream',
          streamId: p.readUInt32BE(0) & 0x7fffffff,
          associatedId: p.readUInt32BE(4) & 0x7fffffff,
          priority: p[8]! >> 5,
          fin,
          unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0,
          headers: this.#codec.decompress(p.subarray(10)),
        };
      case FrameType.SYN_REPLY:
      case FrameType.HEADERS:
        need(4);
        return { type: type === FrameType.SYN_REPLY ? 'syn_reply' : 'headers', streamId: p.readUInt32BE(0) & 0x7fffffff, fin, headers: this.#codec.decompress(p.subarray(4)) };
      case FrameType.RST_STREAM:
        need(8);
        return { type: 'rst_stream', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case FrameType.SETTINGS: {
        need(4);
        const n = p.readUInt32BE(0);
        need(4 + 8 * n);
        const entries = [];
        for (let i = 0; i < n; i++) {
          const fi = p.readUInt32BE(4 + 8 * i);
          entries.push({ flags: fi >>> 24, id: fi & 0xffffff, value: p.readUInt32BE(8 + 8 * i) });
        }
        return { type: 'settings', entries };
      }
      case FrameType.PING:
        need(4);
        return { type: 'ping', id: p.readUInt32BE(0) };
      case FrameType.GOAWAY:
        need(4);
        // SPDY/3 added a status code; tolerate its absence.
        return { type: 'goaway', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.length >= 8 ? p.readUInt32BE(4) : 0 };
      case FrameType.WINDOW_UPDATE:
        need(8);
        return { type: 'window_update', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
      default:
        return { type: 'unknown', frameType: type };
    }
  }
}
