/**
 * The few builders the API schemas are written with (one module per API group beside this one).
 * They produce OpenAPI v3 schema objects in the shape kube-apiserver publishes — a field that
 * names another definition is `allOf: [{$ref}]` with its own description, lists and maps carry
 * the `x-kubernetes-*` list, merge and patch extensions — so the same data serves
 * `/openapi/v3` (kubectl explain, kubectl apply's patch computation) and the server's field
 * validation. Field names, types and extensions are Kubernetes'; descriptions are ours.
 */

/** An OpenAPI v3 schema object, restricted to what Kubernetes definitions use. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  enum?: readonly string[];
  default?: unknown;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; kind: string; version: string }>;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** Short prefixes the modules write references with (`core.PodSpec`), expanded to upstream's names. */
const PREFIXES: Readonly<Record<string, string>> = {
  meta: 'io.k8s.apimachinery.pkg.apis.meta.v1',
  runtime: 'io.k8s.apimachinery.pkg.runtime',
  intstr: 'io.k8s.apimachinery.pkg.util.intstr',
  resource: 'io.k8s.apimachinery.pkg.api.resource',
  core: 'io.k8s.api.core.v1',
  apps: 'io.k8s.api.apps.v1',
  batch: 'io.k8s.api.batch.v1',
  autoscaling: 'io.k8s.api.autoscaling.v1',
  autoscalingv2: 'io.k8s.api.autoscaling.v2',
  policy: 'io.k8s.api.policy.v1',
  node: 'io.k8s.api.node.v1',
  storage: 'io.k8s.api.storage.v1',
  rbac: 'io.k8s.api.rbac.v1',
  coordination: 'io.k8s.api.coordination.v1',
  discovery: 'io.k8s.api.discovery.v1',
  certificates: 'io.k8s.api.certificates.v1',
  authorization: 'io.k8s.api.authorization.v1',
  authentication: 'io.k8s.api.authentication.v1',
  scheduling: 'io.k8s.api.scheduling.v1',
  admissionregistration: 'io.k8s.api.admissionregistration.v1',
  networking: 'io.k8s.api.networking.v1',
  events: 'io.k8s.api.events.v1',
  nodelet: 'io.nodelet.api.v1',
  apiextensions: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
};

/** `core.PodSpec` → `io.k8s.api.core.v1.PodSpec`. */
export function fullName(short: string): string {
  const dot = short.indexOf('.');
  const prefix = PREFIXES[short.slice(0, dot)];
  return prefix ? `${prefix}.${short.slice(dot + 1)}` : short;
}

export const REF_PREFIX = '#/components/schemas/';
const refTo = (short: string): string => REF_PREFIX + fullName(short);

export const str = (description: string, o: { enum?: readonly string[]; format?: string } = {}): JsonSchema => ({ type: 'string', description, ...o });
export const int32 = (description: string): JsonSchema => ({ type: 'integer', format: 'int32', description });
export const int64 = (description: string): JsonSchema => ({ type: 'integer', format: 'int64', description });
export const num = (description: string): JsonSchema => ({ type: 'number', format: 'double', description });
export const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
/** An RFC 3339 time (metav1.Time). */
export const time = (description: string): JsonSchema => ref('meta.Time', description);

/** A field whose value is another definition. */
export const ref = (short: string, description: string): JsonSchema => ({ allOf: [{ $ref: refTo(short) }], description, default: {} });

export interface ListOptions {
  /** x-kubernetes-list-type. */
  type?: 'atomic' | 'set' | 'map';
  /** x-kubernetes-list-map-keys (with type `map`). */
  keys?: string[];
  /** Strategic-merge key; implies patch strategy `merge` unless `patch` says otherwise. */
  merge?: string;
  /** x-kubernetes-patch-strategy (`merge`, `replace`, `merge,retainKeys`). */
  patch?: string;
}

export function list(items: JsonSchema, description: string, o: ListOptions = {}): JsonSchema {
  const out: JsonSchema = { type: 'array', description, items };
  if (o.type) out['x-kubernetes-list-type'] = o.type;
  if (o.keys) out['x-kubernetes-list-map-keys'] = o.keys;
  if (o.merge) out['x-kubernetes-patch-merge-key'] = o.merge;
  if (o.merge || o.patch) out['x-kubernetes-patch-strategy'] = o.patch ?? 'merge';
  return out;
}

/** A list of another definition. */
export const listOf = (short: string, description: string, o: ListOptions = {}): JsonSchema => list({ allOf: [{ $ref: refTo(short) }], default: {} }, description, o);
/** A list of strings. */
export const strings = (description: string, o: ListOptions = { type: 'atomic' }): JsonSchema => list({ type: 'string', default: '' }, description, o);

export const mapOf = (values: JsonSchema, description: string): JsonSchema => ({ type: 'object', additionalProperties: values, description });
export const strMap = (description: string): JsonSchema => mapOf({ type: 'string', default: '' }, description);
/** A map of resource name to quantity (`cpu: 100m`). */
export const quantities = (description: string): JsonSchema => mapOf({ $ref: refTo('resource.Quantity') }, description);

export interface ObjectOptions {
  required?: string[];
  mapType?: 'atomic' | 'granular';
}

/** A struct definition. */
export function obj(description: string, properties: Record<string, JsonSchema>, o: ObjectOptions = {}): JsonSchema {
  const out: JsonSchema = { type: 'object', description, properties };
  if (o.required?.length) out.required = o.required;
  if (o.mapType) out['x-kubernetes-map-type'] = o.mapType;
  return out;
}

/** An object the server stores as given (its fields are not described here, nor checked). */
export const openObject = (description: string): JsonSchema => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

/** A top-level kind: apiVersion, kind and metadata first, tagged with its group/version/kind. */
export function kind(gvk: string, description: string, properties: Record<string, JsonSchema>, o: ObjectOptions & { listMeta?: boolean } = {}): JsonSchema {
  const [gv, k] = gvk.split(':') as [string, string];
  const slash = gv.indexOf('/');
  const group = slash < 0 ? '' : gv.slice(0, slash);
  const version = slash < 0 ? gv : gv.slice(slash + 1);
  const out = obj(description, {
    apiVersion: str('The schema version of this representation of the object, as `group/version` (`v1` for the core group).'),
    kind: str('The type of the object, in CamelCase; set by clients, checked by the server.'),
    metadata: ref(o.listMeta ? 'meta.ListMeta' : 'meta.ObjectMeta', 'Standard object metadata: name, namespace, labels, annotations and the fields the server sets.'),
    ...properties,
  }, o);
  out['x-kubernetes-group-version-kind'] = [{ group, kind: k, version }];
  return out;
}

/** Definitions of one API group under their full names (`core` + `{ Pod }` → `io.k8s.api.core.v1.Pod`). */
export function definitions(prefix: string, defs: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, d] of Object.entries(defs)) out[fullName(`${prefix}.${name}`)] = d;
  return out;
}
