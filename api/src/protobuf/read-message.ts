/**
 * Reads protobuf wire bytes straight into the object's JSON form, walking the schema table in one
 * pass (the mirror of ./write-message.ts; protobufjs' decode, toObject and a conversion pass took
 * three walks and forty times JSON.parse's CPU). Used by ./decode.ts.
 *
 * Time → RFC 3339, Quantity → string, IntOrString → number|string, bytes → base64,
 * RawExtension/FieldsV1 → parsed JSON, Go's embedded structs (INLINE_FIELDS) flattened. Go's
 * marshallers write every non-pointer field, zeros included, so zero values of omitempty fields
 * are dropped. A field the table lacks throws {@link UnknownField} unless it holds only zeros.
 */
import protobuf from 'protobufjs';
import { fullNameOf, isInlined } from './type-info.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** A field the table does not list, holding more than Go's zero value; `path` names it (`spec.#999`). */
export class UnknownField extends Error {
  constructor(readonly path: string) {
    super(`unknown field ${path}`);
  }
}

/** Non-pointer integer fields (JSON `omitempty`) whose 0 is the Go zero value, not a choice. */
const ZERO_MEANS_UNSET = new Set(['hostPort', 'nodePort', 'healthCheckNodePort', 'generation', 'minReadySeconds']);
/** Non-pointer bool fields (JSON `omitempty`); pointer bools (enableServiceLinks, immutable, …) keep false. */
const FALSE_MEANS_UNSET = new Set(['paused', 'stdin', 'stdinOnce', 'tty', 'hostIPC', 'hostNetwork', 'hostPID', 'publishNotReadyAddresses', 'readOnly']);

type Json = Record<string, unknown>;

/** The JSON form of one message of `type` in `bytes`. Throws UnknownField, or a reader error when malformed. */
export function readMessage(type: protobuf.Type, bytes: Uint8Array, path = ''): Json {
  const out: Json = {};
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    const field = type.fieldsById[id];
    if (!field) {
      if (wire === 0 && isZeroLong(r.uint64())) continue;
      if (wire === 2 && isZeroMessage(r.bytes())) continue;
      throw new UnknownField(`${path}${path ? '.' : ''}#${id}`);
    }
    const name = field.name;
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    const where = `${path}${path ? '.' : ''}${name}`;
    if (field.map) {
      const entry = protobuf.Reader.create(r.bytes());
      let key = '';
      let value: unknown;
      while (entry.pos < entry.len) {
        const t = entry.uint32();
        if (t >>> 3 === 1) key = entry.string();
        else if (t >>> 3 === 2) value = nested ? readNested(nested, entry.bytes(), where) : readScalar(entry, field.type, t & 7);
        else entry.skipType(t & 7);
      }
      const m = (out[name] ??= {}) as Json;
      m[key] = value ?? (nested ? {} : field.type === 'string' ? '' : undefined);
    } else if (field.repeated) {
      const list = (out[name] ??= []) as unknown[];
      if (nested) list.push(readNested(nested, r.bytes(), where));
      else if (wire === 2 && field.type !== 'string' && field.type !== 'bytes') {
        // Packed scalars (proto3 writers); upstream's proto2 marshallers write them unpacked.
        const end = r.uint32() + r.pos;
        while (r.pos < end) list.push(readScalar(r, field.type, packedWire(field.type)));
      } else list.push(readScalar(r, field.type, wire));
    } else if (nested) {
      const v = readNested(nested, r.bytes(), where);
      if (isInlined(field)) Object.assign(out, v);
      else if (v !== undefined) out[name] = v;
    } else {
      const v = readScalar(r, field.type, wire);
      if (v === '' || (v === 0 && ZERO_MEANS_UNSET.has(name)) || (v === false && FALSE_MEANS_UNSET.has(name))) continue;
      out[name] = v;
    }
  }
  return out;
}

function readNested(type: protobuf.Type, bytes: Uint8Array, path: string): unknown {
  switch (fullNameOf(type)) {
    case `.${META}.Time`:
      return readTime(bytes, false);
    case `.${META}.MicroTime`:
      return readTime(bytes, true);
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return firstString(bytes, 1) ?? '0';
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString': {
      let kind = 0;
      let intVal = 0;
      let strVal = '';
      const r = protobuf.Reader.create(bytes);
      while (r.pos < r.len) {
        const t = r.uint32();
        if (t === 0x08) kind = toNumber(r.int64());
        else if (t === 0x10) intVal = r.int32();
        else if (t === 0x1a) strVal = r.string();
        else r.skipType(t & 7);
      }
      return kind === 1 ? strVal : intVal;
    }
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `.${META}.FieldsV1`:
      return parseRawJson(firstBytes(bytes, 1));
    case '.k8s.io.api.authorization.v1.ExtraValue': {
      const items: string[] = [];
      const r = protobuf.Reader.create(bytes);
      while (r.pos < r.len) {
        const t = r.uint32();
        if (t === 0x0a) items.push(r.string());
        else r.skipType(t & 7);
      }
      return items;
    }
  }
  return readMessage(type, bytes, path);
}

function readScalar(r: protobuf.Reader, type: string, wire: number): unknown {
  switch (type) {
    case 'string':
      return r.string();
    case 'bytes':
      return Buffer.from(r.bytes()).toString('base64');
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    case 'int64':
      return toNumber(r.int64());
    case 'double':
      return r.double();
    default:
      r.skipType(wire);
      return undefined;
  }
}

function packedWire(type: string): number {
  return type === 'double' ? 1 : 0;
}

/** A zero metav1.Time is marshalled as an empty message: JSON null, so it is left out. */
function readTime(bytes: Uint8Array, micro: boolean): string | undefined {
  let seconds = 0;
  let nanos = 0;
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === 0x08) seconds = toNumber(r.int64());
    else if (t === 0x10) nanos = r.int32();
    else r.skipType(t & 7);
  }
  if (seconds === 0 && nanos === 0) return undefined;
  const iso = new Date(seconds * 1000 + Math.floor(nanos / 1e6)).toISOString();
  if (micro) return iso.replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}${String(Math.floor(nanos / 1000) % 1000).padStart(3, '0')}Z`);
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

function firstString(bytes: Uint8Array, id: number): string | undefined {
  const r = protobuf.Reader.create(bytes);
  let out: string | undefined;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === ((id << 3) | 2)) out = r.string();
    else r.skipType(t & 7);
  }
  return out;
}

function firstBytes(bytes: Uint8Array, id: number): Uint8Array | undefined {
  const r = protobuf.Reader.create(bytes);
  let out: Uint8Array | undefined;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === ((id << 3) | 2)) out = r.bytes();
    else r.skipType(t & 7);
  }
  return out;
}

function parseRawJson(raw: Uint8Array | undefined): unknown {
  if (!raw || raw.length === 0) return undefined;
  return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
}

function toNumber(v: number | protobuf.Long): number {
  return typeof v === 'number' ? v : protobuf.util.LongBits.from(v).toNumber();
}

function isZeroLong(v: { low: number; high: number } | number): boolean {
  return typeof v === 'number' ? v === 0 : v.low === 0 && v.high === 0;
}

/** Whether `bytes` is empty or a message of zero values only (a Go struct at its zero value, as marshalled). */
function isZeroMessage(bytes: Uint8Array): boolean {
  try {
    const r = protobuf.Reader.create(bytes);
    while (r.pos < r.len) {
      const wire = r.uint32() & 7;
      if (wire === 0 && !isZeroLong(r.uint64())) return false;
      if (wire === 1 && !isZeroLong(r.fixed64())) return false;
      if (wire === 5 && r.fixed32() !== 0) return false;
      if (wire === 2 && !isZeroMessage(r.bytes())) return false;
      if (wire === 3 || wire === 4 || wire > 5) return false;
    }
    return true;
  } catch {
    return false; // not even a message: certainly not a zero value
  }
}
