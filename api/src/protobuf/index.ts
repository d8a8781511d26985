export {
  decodeProtobufMessage,
  decodeProtobufObject,
  protobufKinds,
  readEnvelope,
  PROTOBUF_MAGIC,
  type DecodedProtobufObject,
  type ProtobufEnvelope,
} from './decode.js';
export { decodeProtobufList, decodeWatchFrame, parseWatchFrames, MAX_WATCH_FRAME_BYTES, type DecodedProtobufList, type DecodedWatchEvent } from './decode-stream.js';
export {
  encodeProtobufList,
  encodeProtobufMessage,
  encodeProtobufObject,
  encodeWatchFrame,
  protobufEncodable,
  protobufEnvelope,
  type ListMetaJson,
} from './encode.js';
export { encodeOpenApiV2Document, GNOSTIC_OPENAPI_V2_PROTO } from './openapi-v2.js';
