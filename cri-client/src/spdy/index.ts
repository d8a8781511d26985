/**
 * SPDY/3.1 as Kubernetes streaming uses it (exec, attach, port-forward): frames, the zlib header
 * codec with the SPDY/3 dictionary, and a session whose streams are Node Duplexes. See
 * connection.ts for flow control and docs/cri.md for why this is our own code.
 */
export { SPDY3_DICTIONARY } from './dictionary.js';
export {
  encodeFrame, FrameReader, FrameType, GoAwayStatus, HeaderCodec, headerValue, MAX_FRAME_PAYLOAD, RstStatus,
  type Frame, type SpdyHeaders, type SpdyHeadersInit,
} from './frames.js';
export { DEFAULT_WINDOW, SpdyConnection, SpdyStream, type CreateStreamOptions, type SpdyConnectionOptions } from './connection.js';
