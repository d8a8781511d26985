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
import { CORE_V1_QUOTA_PROTO, SCHEDULING_V1_PROTO } from './schema-quota.js';
import { NETWORKING_V1_PROTO } from './schema-networking.js';
import { CORE_V1_REPLICATION_PROTO } from './schema-replication.js';
import { AUTOSCALING_V1_PROTO, AUTOSCALING_V2_PROTO } from './schema-autoscaling.js';
import { readMessage, UnknownField } from './read-message.js';

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
  'v1/ResourceQuota': 'k8s.io.api.core.v1.ResourceQuota',
  'v1/LimitRange': 'k8s.io.api.core.v1.LimitRange',
  'scheduling.k8s.io/v1/PriorityClass': 'k8s.io.api.scheduling.v1.PriorityClass',
  'v1/ReplicationController': 'k8s.io.api.core.v1.ReplicationController',
  'v1/PodTemplate': 'k8s.io.api.core.v1.PodTemplate',
  'networking.k8s.io/v1/Ingress': 'k8s.io.api.networking.v1.Ingress',
  'networking.k8s.io/v1/IngressClass': 'k8s.io.api.networking.v1.IngressClass',
  'networking.k8s.io/v1/NetworkPolicy': 'k8s.io.api.networking.v1.NetworkPolicy',
  'autoscaling/v2/HorizontalPodAutoscaler': 'k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler',
  'autoscaling/v1/HorizontalPodAutoscaler': 'k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler',
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
  for (const text of [META_PROTO, RUNTIME_PROTO, RESOURCE_PROTO, INTSTR_PROTO, CORE_V1_PROTO, CORE_V1_POD_PROTO, APPS_V1_PROTO, BATCH_V1_PROTO, POLICY_V1_PROTO, AUTHORIZATION_V1_PROTO, AUTHORIZATION_V1_REVIEWS_PROTO, AUTHENTICATION_V1_PROTO, RBAC_V1_PROTO, CORE_V1_QUOTA_PROTO, SCHEDULING_V1_PROTO, NETWORKING_V1_PROTO, CORE_V1_REPLICATION_PROTO, AUTOSCALING_V2_PROTO, AUTOSCALING_V1_PROTO]) {
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
  try {
    return { apiVersion, kind, ...readMessage(type, raw) };
  } catch (err) {
    // Fields this schema does not list would be lost: refuse the object (the server answers 415,
    // the client asks for JSON) rather than keep it without them.
    if (err instanceof UnknownField) {
      throw new AgentError('ERR_UNIMPLEMENTED', `protobuf ${apiVersion}/${kind} carries fields this server does not decode (${err.path}); send JSON instead`);
    }
    throw new AgentError('ERR_INVALID_ARGUMENT', `malformed protobuf ${kind} message`, { cause: err });
  }
}
