/**
 * Writes an object in its JSON form straight to protobuf wire bytes, walking the schema table as
 * it goes (no intermediate message object: that copy and protobufjs' reflection made encoding ten
 * times slower than JSON.stringify). Used by ./encode.ts.
 *
 * Throws {@link Unrepresentable} at the first key the table lacks or value of the wrong type: the
 * caller answers JSON then. Special types as ./decode.ts reads them back: Time/MicroTime from RFC
 * 3339, Quantity and IntOrString from their JSON scalars, RawExtension/FieldsV1 as JSON bytes, and
 * Go's embedded structs (INLINE_FIELDS) nested. Zero values ('' and null) are not written, as Go's
 * JSON omits them; repeated scalars are unpacked (proto2, as upstream's marshallers write them).
 */
import protobuf from 'protobufjs';
import { fullNameOf, isInlined } from './type-info.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** A value with no lossless protobuf form; caught by ./encode.ts. */
export class Unrepresentable extends Error {}

const LEN = 2;
const VARINT = 0;
const FIXED64 = 1;

/** Writes the fields of `value` (a message of `type`) to `w`; `topLevel` skips apiVersion and kind. */
export function writeMessage(w: protobuf.Writer, type: protobuf.Type, value: Record<string, unknown>, topLevel = false): void {
  let inlined: Map<protobuf.Field, Record<string, unknown>> | undefined;
  for (const key in value) {
    const v = value[key];
    if (v === null || v === undefined) continue;
    if (topLevel && (key === 'apiVersion' || key === 'kind')) continue;
    const field = type.fields[key];
    if (!field || isInlined(field)) {
      // A key of an embedded Go struct: JSON inlines it, protobuf nests it in its own field.
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
      for (const k in v) {
        const item = v[k];
        w.uint32((field.id << 3) | LEN).fork();
        w.uint32((1 << 3) | LEN).string(k);
        if (nested) writeNested(w, 2, nested, item);
        else writeScalar(w, 2, field.type, item, true);
        w.ldelim();
      }
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new Unrepresentable(key);
      for (const item of v) {
        if (nested) writeNested(w, field.id, nested, item);
        else writeScalar(w, field.id, field.type, item, true);
      }
    } else if (nested) writeNested(w, field.id, nested, v);
    else writeScalar(w, field.id, field.type, v, false);
  }
  if (inlined) for (const [owner, part] of inlined) writeNested(w, owner.id, owner.resolvedType as protobuf.Type, part);
}

/** Field `id` holding a message of `type` (or one of the special types) for the JSON value `v`. */
function writeNested(w: protobuf.Writer, id: number, type: protobuf.Type, v: unknown): void {
  w.uint32((id << 3) | LEN).fork();
  switch (fullNameOf(type)) {
    case `.${META}.Time`:
      writeTime(w, v, false);
      break;
    case `.${META}.MicroTime`:
      writeTime(w, v, true);
      break;
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      if (typeof v !== 'string') throw new Unrepresentable('quantity');
      w.uint32((1 << 3) | LEN).string(v);
      break;
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      if (typeof v === 'string') w.uint32((1 << 3) | VARINT).int64(1).uint32((3 << 3) | LEN).string(v);
      else if (Number.isInteger(v) && Math.abs(v as number) < 2 ** 31) w.uint32((1 << 3) | VARINT).int64(0).uint32((2 << 3) | VARINT).int32(v as number);
      else throw new Unrepresentable('intOrString');
      break;
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `.${META}.FieldsV1`:
      w.uint32((1 << 3) | LEN).bytes(Buffer.from(JSON.stringify(v)));
      break;
    case '.k8s.io.api.authorization.v1.ExtraValue':
      if (!Array.isArray(v)) throw new Unrepresentable('extra');
      for (const s of v) {
        if (typeof s !== 'string') throw new Unrepresentable('extra');
        w.uint32((1 << 3) | LEN).string(s);
      }
      break;
    default:
      if (!isPlainObject(v)) throw new Unrepresentable(type.name);
      writeMessage(w, type, v);
  }
  w.ldelim();
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;

/**
 * Time is whole seconds in JSON (RFC 3339, Z), MicroTime has exactly six fraction digits: any
 * other spelling would come back different from the decoder, so it is not representable.
 */
function writeTime(w: protobuf.Writer, v: unknown, micro: boolean): void {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  if (!m || (micro ? m[2]?.length !== 6 : m[2] !== undefined)) throw new Unrepresentable('time');
  const ms = Date.parse(`${m[1]}Z`);
  if (!Number.isFinite(ms)) throw new Unrepresentable('time');
  const nanos = m[2] ? Number(m[2].padEnd(9, '0')) : 0;
  if (ms !== 0) w.uint32((1 << 3) | VARINT).int64(ms / 1000);
  if (nanos) w.uint32((2 << 3) | VARINT).int32(nanos);
}

/** A scalar field; `always` writes '' too (map values and list items have no "unset"). */
function writeScalar(w: protobuf.Writer, id: number, type: string, v: unknown, always: boolean): void {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw new Unrepresentable('string');
      if (v !== '' || always) w.uint32((id << 3) | LEN).string(v);
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw new Unrepresentable('bool');
      w.uint32((id << 3) | VARINT).bool(v);
      return;
    case 'int32':
      if (!Number.isInteger(v) || Math.abs(v as number) >= 2 ** 31) throw new Unrepresentable('int32');
      w.uint32((id << 3) | VARINT).int32(v as number);
      return;
    case 'int64':
      if (!Number.isSafeInteger(v)) throw new Unrepresentable('int64');
      w.uint32((id << 3) | VARINT).int64(v as number);
      return;
    case 'double':
      if (typeof v !== 'number') throw new Unrepresentable('double');
      w.uint32((id << 3) | FIXED64).double(v);
      return;
    case 'bytes': {
      if (typeof v !== 'string') throw new Unrepresentable('bytes');
      const b = Buffer.from(v, 'base64');
      // Only canonical base64 comes back as the same string.
      if (b.toString('base64') !== v) throw new Unrepresentable('bytes');
      w.uint32((id << 3) | LEN).bytes(b);
      return;
    }
    default:
      throw new Unrepresentable(type);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
