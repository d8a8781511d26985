/**
 * Decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`).
 *
 * Wire form (k8s.io/apimachinery runtime/serializer/protobuf): the 4-byte magic `k8s\0`, then a
 * `runtime.Unknown` whose `typeMeta` names the kind and whose `raw` holds that kind's message.
 * The decoded message is turned into the object's JSON form: Time → RFC 3339, Quantity →
 * string, IntOrString → number|string, bytes → base64, RawExtension/FieldsV1 → parsed JSON.
 * Pure and synchronous; safe to call concurrently.
 */
import protobuf from 'protobufjs';
import { AgentError } from '@nodelet/base';
import { INTSTR_PROTO, META_PROTO, RESOURCE_PROTO, RUNTIME_PROTO } from './schema-meta.js';
import { APPS_V1_PROTO, AUTHORIZATION_V1_PROTO, CORE_V1_PROTO } from './schema-workloads.js';
import { CORE_V1_POD_PROTO } from './schema-pod.js';
import { AUTHENTICATION_V1_PROTO, AUTHORIZATION_V1_REVIEWS_PROTO, RBAC_V1_PROTO } from './schema-rbac-auth.js';
import { BATCH_V1_PROTO } from './schema-batch.js';
import { POLICY_V1_PROTO } from './schema-policy.js';

export const PROTOBUF_MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** apiVersion/kind → fully qualified message name, for the kinds a protobuf body may carry. */
const MESSAGE_BY_GVK: Readonly<Record<string, string>> = {
  'v1/Namespace': 'k8s.io.api.core.v1.Namespace',
  'v1/ConfigMap': 'k8s.io.api.core.v1.ConfigMap',
  'v1/Secret': 'k8s.io.api.core.v1.Secret',
  'v1/Service': 'k8s.io.api.core.v1.Service',
  'v1/ServiceAccount': 'k8s.io.api.core.v1.ServiceAccount',
  'v1/Pod': 'k8s.io.api.core.v1.Pod',
  'apps/v1/Deployment': 'k8s.io.api.apps.v1.Deployment',
  'apps/v1/ReplicaSet': 'k8s.io.api.apps.v1.ReplicaSet',
  'batch/v1/Job': 'k8s.io.api.batch.v1.Job',
  'batch/v1/CronJob': 'k8s.io.api.batch.v1.CronJob',
  'policy/v1/PodDisruptionBudget': 'k8s.io.api.policy.v1.PodDisruptionBudget',
  'policy/v1/Eviction': 'k8s.io.api.policy.v1.Eviction',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'k8s.io.api.authorization.v1.SelfSubjectAccessReview',
  'authorization.k8s.io/v1/SelfSubjectRulesReview': 'k8s.io.api.authorization.v1.SelfSubjectRulesReview',
  'authorization.k8s.io/v1/SubjectAccessReview': 'k8s.io.api.authorization.v1.SubjectAccessReview',
  'authorization.k8s.io/v1/LocalSubjectAccessReview': 'k8s.io.api.authorization.v1.LocalSubjectAccessReview',
  'authentication.k8s.io/v1/SelfSubjectReview': 'k8s.io.api.authentication.v1.SelfSubjectReview',
  'authentication.k8s.io/v1/TokenRequest': 'k8s.io.api.authentication.v1.TokenRequest',
  'rbac.authorization.k8s.io/v1/Role': 'k8s.io.api.rbac.v1.Role',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'k8s.io.api.rbac.v1.ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'k8s.io.api.rbac.v1.RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'k8s.io.api.rbac.v1.ClusterRoleBinding',
  // Replies only: the ERROR event of a watch.
  'v1/Status': 'k8s.io.apimachinery.pkg.apis.meta.v1.Status',
};

/** The fully qualified message name of `apiVersion`/`kind`, when the tables have one. */
export function messageNameOf(apiVersion: string, kind: string): string | undefined {
  return Object.hasOwn(MESSAGE_BY_GVK, `${apiVersion}/${kind}`) ? MESSAGE_BY_GVK[`${apiVersion}/${kind}`] : undefined;
}

let rootCache: protobuf.Root | undefined;
/** The parsed schema tables (built once; shared with ./encode.ts). */
export function protobufRoot(): protobuf.Root {
  return root();
}
function root(): protobuf.Root {
  if (rootCache) return rootCache;
  const r = new protobuf.Root();
  for (const text of [META_PROTO, RUNTIME_PROTO, RESOURCE_PROTO, INTSTR_PROTO, CORE_V1_PROTO, CORE_V1_POD_PROTO, APPS_V1_PROTO, BATCH_V1_PROTO, POLICY_V1_PROTO, AUTHORIZATION_V1_PROTO, AUTHORIZATION_V1_REVIEWS_PROTO, AUTHENTICATION_V1_PROTO, RBAC_V1_PROTO]) {
    protobuf.parse(text, r, { keepCase: true });
  }
  r.resolveAll();
  rootCache = r;
  return r;
}

export interface DecodedProtobufObject {
  apiVersion: string;
  kind: string;
  /** The object in its JSON form, with apiVersion and kind set. */
  object: Record<string, unknown>;
}

/** The kinds {@link decodeProtobufObject} understands, as `apiVersion/kind`. */
export function protobufKinds(): string[] {
  return Object.keys(MESSAGE_BY_GVK);
}

/**
 * Decodes one enveloped object. Throws AgentError ERR_INVALID_ARGUMENT for a missing magic, a
 * malformed envelope or message, and for kinds this decoder does not know (the server answers
 * 415 then, naming the JSON alternative).
 */
export function decodeProtobufObject(body: Uint8Array): DecodedProtobufObject {
  if (body.length < 4 || !PROTOBUF_MAGIC.every((b, i) => body[i] === b)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'protobuf body does not start with the "k8s\\0" magic');
  }
  const env = readEnvelope(body.subarray(4));
  if (env.contentEncoding) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `unsupported protobuf content encoding "${env.contentEncoding}"`);
  }
  return { apiVersion: env.apiVersion, kind: env.kind, object: decodeProtobufMessage(env.apiVersion, env.kind, env.raw) };
}

/** A runtime.Unknown read by hand, so `raw` is a view of the input (a list body can be megabytes). */
export interface ProtobufEnvelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** Reads the runtime.Unknown after the magic. Throws ERR_INVALID_ARGUMENT when malformed. */
export function readEnvelope(bytes: Uint8Array): ProtobufEnvelope {
  const env: ProtobufEnvelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  try {
    const r = protobuf.Reader.create(bytes);
    while (r.pos < r.len) {
      const tag = r.uint32();
      const id = tag >>> 3;
      if ((tag & 7) !== 2 || id < 1 || id > 4) {
        r.skipType(tag & 7);
        continue;
      }
      if (id === 1) {
        const tm = protobuf.Reader.create(r.bytes());
        while (tm.pos < tm.len) {
          const t = tm.uint32();
          if (t === 0x0a) env.apiVersion = tm.string();
          else if (t === 0x12) env.kind = tm.string();
          else tm.skipType(t & 7);
        }
      } else if (id === 2) env.raw = r.bytes();
      else if (id === 3) env.contentEncoding = r.string();
      else env.contentType = r.string();
    }
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'malformed protobuf envelope', { cause: err });
  }
  return env;
}
/**
 * Decodes one kind's message bytes (no envelope) into its JSON form with apiVersion and kind set.
 * Throws as {@link decodeProtobufObject}.
 */
export function decodeProtobufMessage(apiVersion: string, kind: string, raw: Uint8Array): Record<string, unknown> {
  const messageName = messageNameOf(apiVersion, kind);
  if (!messageName) {
    throw new AgentError('ERR_UNIMPLEMENTED', `protobuf decoding of ${apiVersion}/${kind} is not supported; send JSON instead`);
  }
  const type = root().lookupType(messageName);
  let message: protobuf.Message;
  try {
    message = type.decode(raw);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `malformed protobuf ${kind} message`, { cause: err });
  }
  // Fields this schema does not list are skipped by the decoder: refuse a body that sets one
  // (415, send JSON) rather than store the object without it.
  const unknown = firstUnknownField(type, raw);
  if (unknown) {
    throw new AgentError('ERR_UNIMPLEMENTED', `protobuf ${apiVersion}/${kind} carries fields this server does not decode (${unknown}); send JSON instead`);
  }
  const plain = type.toObject(message, { longs: Number, bytes: String, defaults: false, arrays: false, objects: false });
  return { apiVersion, kind, ...(toJsonForm(type, plain) as Record<string, unknown>) };
}

/**
 * The path of the first field in `bytes` that `type` does not list and that holds more than Go's
 * zero value (generated marshallers write every non-pointer field, zeros included, so unknown
 * zero fields carry nothing). Recurses into known message fields, map values included.
 */
function firstUnknownField(type: protobuf.Type, bytes: Uint8Array, path = ''): string | undefined {
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    const field = type.fieldsById[id];
    if (!field) {
      if (wire === 0 && r.uint64().toString() === '0') continue;
      if (wire === 2 && isZeroMessage(r.bytes())) continue;
      return `${path}${path ? '.' : ''}#${id}`;
    }
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (wire !== 2 || (!nested && !field.map)) {
      r.skipType(wire);
      continue;
    }
    const sub = r.bytes();
    const where = `${path}${path ? '.' : ''}${field.name}`;
    if (field.map) {
      if (!nested) continue;
      const entry = protobuf.Reader.create(sub);
      while (entry.pos < entry.len) {
        const t = entry.uint32();
        if (t >>> 3 === 2 && (t & 7) === 2) {
          const found = firstUnknownField(nested, entry.bytes(), where);
          if (found) return found;
        } else entry.skipType(t & 7);
      }
    } else if (nested) {
      const found = firstUnknownField(nested, sub, where);
      if (found) return found;
    }
  }
  return undefined;
}

/** Whether `bytes` is empty or a message of zero values only (a Go struct at its zero value, as marshalled). */
function isZeroMessage(bytes: Uint8Array): boolean {
  try {
    const r = protobuf.Reader.create(bytes);
    while (r.pos < r.len) {
      const wire = r.uint32() & 7;
      if (wire === 0 && r.uint64().toString() !== '0') return false;
      if (wire === 1 && r.fixed64().toString() !== '0') return false;
      if (wire === 5 && r.fixed32() !== 0) return false;
      if (wire === 2 && !isZeroMessage(r.bytes())) return false;
      if (wire === 3 || wire === 4 || wire > 5) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * A type's fully qualified name, cached: protobufjs computes `fullName` by walking the parents on
 * every read, which was most of the codec's time.
 */
const FULL_NAMES = new WeakMap<protobuf.Type, string>();
export function fullNameOf(type: protobuf.Type): string {
  let name = FULL_NAMES.get(type);
  if (name === undefined) {
    name = type.fullName;
    FULL_NAMES.set(type, name);
  }
  return name;
}

function toJsonForm(type: protobuf.Type, value: Record<string, unknown>): unknown {
  switch (fullNameOf(type)) {
    case '.k8s.io.apimachinery.pkg.apis.meta.v1.Time':
    case '.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime':
      return timeToJson(value, type.name === 'MicroTime');
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return value.string ?? '0';
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return Number(value.type ?? 0) === 1 ? (value.strVal ?? '') : (value.intVal ?? 0);
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
      return parseRawJson(value.raw);
    case '.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1':
      return parseRawJson(value.Raw);
    case '.k8s.io.api.authorization.v1.ExtraValue':
      // A named []string in Go: a plain list in JSON.
      return (value.items as string[] | undefined) ?? [];
  }
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = value[field.name];
    if (v === undefined || v === null) continue;
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (nested && isInlined(field)) {
      Object.assign(out, toJsonForm(nested, v as Record<string, unknown>));
    } else if (!nested) {
      // Go's generated marshallers always write non-pointer scalars; their zero values mean
      // "unset" (the JSON form omits them), so drop those that would otherwise read as set.
      if (v === '' || (v === 0 && ZERO_MEANS_UNSET.has(field.name)) || (v === false && FALSE_MEANS_UNSET.has(field.name))) continue;
      out[field.name] = v;
    } else if (field.map) {
      const m: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v as Record<string, Record<string, unknown>>)) m[k] = toJsonForm(nested, item);
      out[field.name] = m;
    } else if (field.repeated) {
      out[field.name] = (v as Record<string, unknown>[]).map((item) => toJsonForm(nested, item));
    } else {
      const converted = toJsonForm(nested, v as Record<string, unknown>);
      // A zero metav1.Time is marshalled as an empty message: JSON null, so leave it out.
      if (converted !== undefined) out[field.name] = converted;
    }
  }
  return out;
}

/**
 * Fields Go embeds (JSON inlines the struct's fields into the parent) but protobuf nests as a
 * message: the key selectors' and sources' LocalObjectReference, Probe's handler, Volume's source.
 */
export const INLINE_FIELDS: ReadonlySet<string> = new Set(['localObjectReference', 'handler', 'volumeSource']);

/** Whether `field` is one of the {@link INLINE_FIELDS} (a message field of that name, not a string like RuntimeClass.handler). */
export function isInlined(field: protobuf.Field): boolean {
  return INLINE_FIELDS.has(field.name) && field.resolvedType instanceof protobuf.Type && !field.repeated && !field.map;
}

/** Non-pointer integer fields (JSON `omitempty`) whose 0 is the Go zero value, not a choice. */
const ZERO_MEANS_UNSET = new Set(['hostPort', 'nodePort', 'healthCheckNodePort', 'generation', 'minReadySeconds']);
/** Non-pointer bool fields (JSON `omitempty`); pointer bools (enableServiceLinks, immutable, …) keep false. */
const FALSE_MEANS_UNSET = new Set(['paused', 'stdin', 'stdinOnce', 'tty', 'hostIPC', 'hostNetwork', 'hostPID', 'publishNotReadyAddresses', 'readOnly']);

function timeToJson(value: Record<string, unknown>, micro: boolean): string | undefined {
  const seconds = Number(value.seconds ?? 0);
  const nanos = Number(value.nanos ?? 0);
  if (seconds === 0 && nanos === 0) return undefined;
  const iso = new Date(seconds * 1000 + Math.floor(nanos / 1e6)).toISOString();
  if (micro) return iso.replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}${String(Math.floor(nanos / 1000) % 1000).padStart(3, '0')}Z`);
  return iso.replace(/\.\d{3}Z$/, 'Z');
}

function parseRawJson(raw: unknown): unknown {
  if (typeof raw !== 'string' || raw === '') return undefined;
  const text = Buffer.from(raw, 'base64').toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'embedded raw object is not JSON', { cause: err });
  }
}
