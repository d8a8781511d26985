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
 *   watch   = frames of uint32-BE length + "k8s\0" Unknown{ raw = WatchEvent{ 1: type, 2: RawExtension{ 1: object } } }
 * Pure and synchronous; safe to call concurrently.
 */
import protobuf from 'protobufjs';
import { PROTOBUF_MAGIC, isInlined, protobufRoot, messageNameOf } from './decode.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Thrown inside the converter when a value has no lossless protobuf form; never escapes this file. */
class Unrepresentable extends Error {}

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
    const plain = toMessageForm(type, obj, true);
    return type.encode(plain).finish();
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
  w.uint32((1 << 3) | 2).bytes(lm.encode(toMessageForm(lm, meta as Record<string, unknown>, false)).finish());
  for (const item of items) w.uint32((2 << 3) | 2).bytes(item);
  return protobufEnvelope(apiVersion, `${kind}List`, w.finish());
}

/**
 * One watch frame: the 4-byte big-endian length, then the enveloped meta.v1.WatchEvent whose
 * object is `objectEnvelope` (an enveloped object). The event envelope's typeMeta is empty: Go's
 * WatchEvent carries no TypeMeta of its own.
 */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(type);
  w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(objectEnvelope).ldelim();
  const event = protobufEnvelope('', '', w.finish());
  const frame = new Uint8Array(4 + event.length);
  new DataView(frame.buffer).setUint32(0, event.length);
  frame.set(event, 4);
  return frame;
}

/**
 * The JSON form `value` of a message of `type` as the plain object protobufjs encodes (Time as
 * seconds/nanos, Quantity as {string}, …). Throws Unrepresentable for a field the table lacks or
 * a value of the wrong type.
 */
function toMessageForm(type: protobuf.Type, value: Record<string, unknown>, topLevel: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let inlined: Map<protobuf.Field, Record<string, unknown>> | undefined;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === null || v === undefined) continue;
    if (topLevel && (key === 'apiVersion' || key === 'kind')) continue;
    const field = type.fields[key];
    if (!field || isInlined(field)) {
      // A key of an embedded struct (JSON inlines it, protobuf nests it): collect it for that field.
      const owner = type.fieldsArray.find((f) => isInlined(f) && (f.resolvedType as protobuf.Type).fields[key] !== undefined);
      if (!owner) throw new Unrepresentable(key);
      inlined ??= new Map();
      const part = inlined.get(owner) ?? {};
      part[key] = v;
      inlined.set(owner, part);
      continue;
    }
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (field.map) {
      if (!isPlainObject(v)) throw new Unrepresentable(key);
      const m: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) m[k] = nested ? toSpecialOrMessage(nested, item) : scalar(field.type, item);
      out[key] = m;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new Unrepresentable(key);
      out[key] = v.map((item: unknown) => (nested ? toSpecialOrMessage(nested, item) : scalar(field.type, item)));
    } else if (nested) {
      out[key] = toSpecialOrMessage(nested, v);
    } else {
      if (v === '') continue;
      out[key] = scalar(field.type, v);
    }
  }
  for (const [owner, part] of inlined ?? []) out[owner.name] = toMessageForm(owner.resolvedType as protobuf.Type, part, false);
  return out;
}

function toSpecialOrMessage(type: protobuf.Type, v: unknown): Record<string, unknown> {
  switch (type.fullName) {
    case `.${META}.Time`:
      return timeForm(v, false);
    case `.${META}.MicroTime`:
      return timeForm(v, true);
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      if (typeof v !== 'string') throw new Unrepresentable('quantity');
      return { string: v };
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      if (typeof v === 'string') return { type: 1, strVal: v };
      if (Number.isInteger(v) && Math.abs(v as number) < 2 ** 31) return { type: 0, intVal: v };
      throw new Unrepresentable('intOrString');
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
      return { raw: Buffer.from(JSON.stringify(v)) };
    case `.${META}.FieldsV1`:
      return { Raw: Buffer.from(JSON.stringify(v)) };
    case '.k8s.io.api.authorization.v1.ExtraValue':
      if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Unrepresentable('extra');
      return { items: v };
  }
  if (!isPlainObject(v)) throw new Unrepresentable(type.name);
  return toMessageForm(type, v, false);
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/**
 * Time is whole seconds in JSON (RFC 3339, Z), MicroTime has exactly six fraction digits: any
 * other spelling would come back different from the decoder, so it is not representable.
 */
function timeForm(v: unknown, micro: boolean): Record<string, unknown> {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  if (!m || (micro ? m[2]?.length !== 6 : m[2] !== undefined)) throw new Unrepresentable('time');
  const ms = Date.parse(`${m[1]}Z`);
  if (!Number.isFinite(ms)) throw new Unrepresentable('time');
  const nanos = m[2] ? Number(m[2].padEnd(9, '0')) : 0;
  return nanos ? { seconds: ms / 1000, nanos } : { seconds: ms / 1000 };
}

function scalar(type: string, v: unknown): unknown {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw new Unrepresentable('string');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw new Unrepresentable('bool');
      return v;
    case 'int32':
      if (!Number.isInteger(v) || Math.abs(v as number) >= 2 ** 31) throw new Unrepresentable('int32');
      return v;
    case 'int64':
      if (!Number.isSafeInteger(v)) throw new Unrepresentable('int64');
      return v;
    case 'double':
      if (typeof v !== 'number') throw new Unrepresentable('double');
      return v;
    case 'bytes': {
      if (typeof v !== 'string') throw new Unrepresentable('bytes');
      const b = Buffer.from(v, 'base64');
      // Only canonical base64 comes back as the same string.
      if (b.toString('base64') !== v) throw new Unrepresentable('bytes');
      return b;
    }
    default:
      throw new Unrepresentable(type);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
