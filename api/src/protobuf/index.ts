export { decodeProtobufObject, protobufKinds, PROTOBUF_MAGIC, type DecodedProtobufObject } from './decode.js';
