/**
 * Encoder for Kubernetes protobuf responses (`application/vnd.kubernetes.protobuf`), the mirror
 * of ./decode.ts over the same schema tables.
 *
 * The tables list a subset of each kind's fields, so an object is encoded only when every field
 * it holds has a number in the table and a value of the field's type: the encoder returns
 * `undefined` otherwise and the caller answers JSON. That check is what keeps protobuf lossless.
 * Like Go's generated marshallers, zero values (`''`, `null`) are not carried.
 *
 * Wire forms (k8s.io/apimachinery runtime/serializer/protobuf and pkg/util/framer):
 *   object  = "k8s\0" Unknown{ typeMeta{apiVersion, kind}, raw = message }
 *   list    = "k8s\0" Unknown{ typeMeta{apiVersion, <Kind>List}, raw = { 1: ListMeta, 2: item… } }
 *   watch   = frames of uint32-BE length + WatchEvent{ 1: type, 2: RawExtension{ 1: object } }, where the
 *             event is bare (the codec factory's raw protobuf serializer writes the stream: no magic, no
 *             Unknown) and only the object inside is enveloped (the full serializer)
 * Pure and synchronous; safe to call concurrently.
 */
import protobuf from 'protobufjs';
import { PROTOBUF_MAGIC, protobufRoot, messageNameOf } from './decode.js';
import { Unrepresentable, writeMessage } from './write-message.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/**
 * The kinds served as protobuf: those whose table covers every field nodelet stores for them.
 * Kinds whose tables hold only what kubectl sends (a Deployment's status, a Job's) decode request
 * bodies but are answered in JSON, so a watch of them never meets an object it cannot send.
 */
const RESPONSE_KINDS: ReadonlySet<string> = new Set(['v1/Pod', 'v1/ConfigMap', 'v1/Secret', 'v1/ServiceAccount', 'v1/Service', 'v1/Status']);

/** Whether replies may carry this kind as protobuf (kinds outside {@link RESPONSE_KINDS} are served as JSON). */
export function protobufEncodable(apiVersion: string, kind: string): boolean {
  return RESPONSE_KINDS.has(`${apiVersion}/${kind}`);
}

/**
 * The kind's message bytes (no envelope) for `obj` in its JSON form, or undefined when the kind
 * has no table or `obj` holds something the table cannot carry.
 */
export function encodeProtobufMessage(apiVersion: string, kind: string, obj: Record<string, unknown>): Uint8Array | undefined {
  const name = protobufEncodable(apiVersion, kind) ? messageNameOf(apiVersion, kind) : undefined;
  if (!name) return undefined;
  const type = protobufRoot().lookupType(name);
  try {
    const w = protobuf.Writer.create();
    writeMessage(w, type, obj, true);
    return w.finish();
  } catch (err) {
    if (err instanceof Unrepresentable) return undefined;
    throw err;
  }
}

/** `obj` (with apiVersion and kind set) as an enveloped protobuf object, or undefined as {@link encodeProtobufMessage}. */
export function encodeProtobufObject(obj: Record<string, unknown>): Uint8Array | undefined {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const raw = encodeProtobufMessage(apiVersion, kind, obj);
  return raw && protobufEnvelope(apiVersion, kind, raw);
}

/**
 * `k8s\0` + runtime.Unknown around `raw`. contentEncoding and contentType are written empty, as
 * Go's marshaller writes every non-pointer field.
 */
export function protobufEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const w = protobuf.Writer.create();
  w.raw(PROTOBUF_MAGIC);
  w.uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).string(apiVersion).uint32((2 << 3) | 2).string(kind).ldelim();
  w.uint32((2 << 3) | 2).bytes(raw);
  w.uint32((3 << 3) | 2).string('');
  w.uint32((4 << 3) | 2).string('');
  return w.finish();
}

/** ListMeta in its JSON form (resourceVersion, continue, remainingItemCount). */
export interface ListMetaJson {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * An enveloped `<Kind>List` from the items' message bytes (from {@link encodeProtobufMessage},
 * so a cache of per-object bytes can be reused). `kind` is the item kind.
 */
export function encodeProtobufList(apiVersion: string, kind: string, meta: ListMetaJson, items: readonly Uint8Array[]): Uint8Array {
  const w = protobuf.Writer.create();
  const lm = protobufRoot().lookupType(`${META}.ListMeta`);
  w.uint32((1 << 3) | 2).fork();
  writeMessage(w, lm, meta as Record<string, unknown>);
  w.ldelim();
  for (const item of items) w.uint32((2 << 3) | 2).bytes(item);
  return protobufEnvelope(apiVersion, `${kind}List`, w.finish());
}

/**
 * One watch frame: the 4-byte big-endian length (the length-delimited framer), then the bare
 * meta.v1.WatchEvent whose object is `objectEnvelope` (an enveloped object). kube-apiserver writes
 * the event with the raw protobuf serializer and client-go reads it the same way, so a `k8s\0`
 * magic or an Unknown here would be read as the event's own fields and the frame refused as one
 * without a type.
 */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(type);
  w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(objectEnvelope).ldelim();
  const event = w.finish();
  const frame = new Uint8Array(4 + event.length);
  new DataView(frame.buffer).setUint32(0, event.length);
  frame.set(event, 4);
  return frame;
}
