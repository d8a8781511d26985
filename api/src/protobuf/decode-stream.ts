/**
 * Decoding protobuf list replies and watch streams (the client side of ./encode.ts): a
 * `<Kind>List` envelope into `{ metadata, items }`, and a body of length-prefixed WatchEvent
 * frames into `{ type, object }` values, chunk boundaries anywhere.
 */
import protobuf from 'protobufjs';
import { AgentError } from '@nodelet/base';
import { PROTOBUF_MAGIC, decodeProtobufMessage, decodeProtobufObject, protobufRoot, readEnvelope } from './decode.js';

/** Largest watch frame accepted (kube's default max object size is 3 MiB; frames add little). */
export const MAX_WATCH_FRAME_BYTES = 16 * 1024 * 1024;

export interface DecodedProtobufList {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  items: Record<string, unknown>[];
}

/**
 * Decodes an enveloped `<Kind>List`. Throws ERR_INVALID_ARGUMENT when malformed and
 * ERR_UNIMPLEMENTED when an item holds fields the tables lack (the caller asks for JSON then).
 */
export function decodeProtobufList(body: Uint8Array): DecodedProtobufList {
  if (body.length < 4 || !PROTOBUF_MAGIC.every((b, i) => body[i] === b)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'protobuf body does not start with the "k8s\\0" magic');
  }
  const env = readEnvelope(body.subarray(4));
  if (!env.kind.endsWith('List') || env.contentEncoding) throw new AgentError('ERR_INVALID_ARGUMENT', `protobuf reply is a ${env.kind}, not a list`);
  const itemKind = env.kind.slice(0, -'List'.length);
  const out: DecodedProtobufList = { apiVersion: env.apiVersion, kind: env.kind, metadata: {}, items: [] };
  const r = protobuf.Reader.create(env.raw);
  try {
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag === 0x0a) out.metadata = listMetaJson(r.bytes());
      else if (tag === 0x12) out.items.push(decodeProtobufMessage(env.apiVersion, itemKind, r.bytes()));
      else r.skipType(tag & 7);
    }
  } catch (err) {
    if (err instanceof AgentError) throw err;
    throw new AgentError('ERR_INVALID_ARGUMENT', `malformed protobuf ${env.kind}`, { cause: err });
  }
  return out;
}

function listMetaJson(bytes: Uint8Array): Record<string, unknown> {
  const t = protobufRoot().lookupType('k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta');
  const o = t.toObject(t.decode(bytes), { longs: Number, defaults: false }) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== '' && v !== undefined) out[k] = v;
  return out;
}

/** One decoded watch event. */
export interface DecodedWatchEvent {
  type: string;
  object: Record<string, unknown>;
}

/**
 * Splits a protobuf watch body into events. Throws ERR_UNAVAILABLE (retryable) for a malformed
 * or oversized frame, and ERR_UNIMPLEMENTED when an object holds fields the tables lack.
 */
export async function* parseWatchFrames(chunks: AsyncIterable<Uint8Array>, what: string): AsyncGenerator<DecodedWatchEvent> {
  let buffered: Buffer = Buffer.alloc(0);
  for await (const chunk of chunks) {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (buffered.length >= 4) {
      const size = buffered.readUInt32BE(0);
      if (size > MAX_WATCH_FRAME_BYTES) throw new AgentError('ERR_UNAVAILABLE', `${what}: watch frame of ${size} bytes is too large`, { retryable: true });
      if (buffered.length < 4 + size) break;
      const frame = buffered.subarray(4, 4 + size);
      buffered = buffered.subarray(4 + size);
      yield decodeWatchFrame(frame, what);
    }
  }
  if (buffered.length > 0) throw new AgentError('ERR_UNAVAILABLE', `${what}: watch stream ended inside a frame`, { retryable: true });
}

/**
 * One frame's payload (without the length): a bare meta.v1.WatchEvent, as kube-apiserver's raw
 * protobuf serializer writes it; the object inside is enveloped.
 */
export function decodeWatchFrame(frame: Uint8Array, what: string): DecodedWatchEvent {
  if (frame.length >= 4 && PROTOBUF_MAGIC.every((b, i) => frame[i] === b)) {
    // Older nodelet servers enveloped the event too; kube-apiserver never does. Say so rather than
    // report a frame without a type, which is what client-go says of such a frame.
    throw new AgentError('ERR_UNAVAILABLE', `${what}: watch frame starts with the "k8s\\0" magic, but a protobuf watch event is written bare; the API server's watch framing is not kube-apiserver's`, { retryable: true });
  }
  let type = '';
  let object: Uint8Array | undefined;
  try {
    const r = protobuf.Reader.create(frame);
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag === 0x0a) type = r.string();
      else if (tag === 0x12) {
        const ext = protobuf.Reader.create(r.bytes());
        while (ext.pos < ext.len) {
          const t = ext.uint32();
          if (t === 0x0a) object = ext.bytes();
          else ext.skipType(t & 7);
        }
      } else r.skipType(tag & 7);
    }
  } catch (err) {
    throw new AgentError('ERR_UNAVAILABLE', `${what}: malformed watch frame from API server`, { cause: err, retryable: true });
  }
  if (!type || !object) throw new AgentError('ERR_UNAVAILABLE', `${what}: watch frame without a type or object`, { retryable: true });
  return { type, object: decodeProtobufObject(object).object };
}
