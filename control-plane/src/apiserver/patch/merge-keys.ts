/**
 * Strategic-merge-patch list semantics of the served kinds, read from the same schemas
 * `/openapi/v3` publishes (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`) — the
 * ones kubectl computes its client-side apply patches from, so both sides agree. A path the
 * schema does not describe falls back to the merge keys below (Go struct tags `patchStrategy` /
 * `patchMergeKey` in k8s.io/api); a list named nowhere is atomic (replaced whole).
 */
import { API_SCHEMAS, REF_PREFIX, schemaNameOfKind, type JsonSchema } from '@nodelet/api';
import { RESOURCE_DEFS } from '../resources.js';

export type ListStrategy = { kind: 'merge'; key: string } | { kind: 'set' } | { kind: 'atomic' };

/** List fields merged by a key, grouped by that key. */
const MERGE_KEY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  name: ['containers', 'initContainers', 'ephemeralContainers', 'env', 'volumes', 'imagePullSecrets', 'resourceClaims'],
  mountPath: ['volumeMounts'],
  devicePath: ['volumeDevices'],
  type: ['conditions'],
  uid: ['ownerReferences'],
  ip: ['hostAliases'],
  topologyKey: ['topologySpreadConstraints'],
};

const BY_FIELD: Readonly<Record<string, ListStrategy>> = {
  ...Object.fromEntries(Object.entries(MERGE_KEY_FIELDS).flatMap(([key, fields]) => fields.map((f) => [f, { kind: 'merge', key } as const]))),
  finalizers: { kind: 'set' },
};

/** Schema name of each served kind (kinds are unique across the served groups), and of Scale. */
const SCHEMA_OF_KIND = new Map<string, string>([['Scale', 'io.k8s.api.autoscaling.v1.Scale']]);
for (const d of RESOURCE_DEFS) {
  const name = schemaNameOfKind(d.group, d.version, d.kind);
  if (name && !SCHEMA_OF_KIND.has(d.kind)) SCHEMA_OF_KIND.set(d.kind, name);
}

function deref(s: JsonSchema | undefined): JsonSchema | undefined {
  for (let i = 0; s && i < 32; i++) {
    if (s.$ref) s = API_SCHEMAS[s.$ref.slice(REF_PREFIX.length)];
    else if (s.allOf?.length === 1 && !s.properties) s = s.allOf[0];
    else return s;
  }
  return s;
}

/** True when the served schemas describe `kind` (else its objects are unstructured). */
export function kindHasSchema(kind: string): boolean {
  return SCHEMA_OF_KIND.has(kind);
}

/**
 * The schema of the field at `path` of `kind` (field names from the root, `[]` for a list's
 * items, any name for a map's values), with its own extensions; undefined where the schemas do
 * not describe it. `resolve` gives the definition a `$ref`/`allOf` wrapper stands for.
 */
export function fieldSchemaAt(kind: string, path: readonly string[]): JsonSchema | undefined {
  const root = SCHEMA_OF_KIND.get(kind);
  let s: JsonSchema | undefined = root ? API_SCHEMAS[root] : undefined;
  for (const step of path) {
    if (!s) return undefined;
    const r = deref(s);
    if (!r || r['x-kubernetes-preserve-unknown-fields']) return undefined;
    // The field's own schema keeps its extensions (`allOf` wrappers carry them beside the $ref).
    s = step === '[]' ? r.items : (r.properties?.[step] ?? (r.additionalProperties && typeof r.additionalProperties === 'object' ? r.additionalProperties : undefined));
  }
  return s;
}

/** The definition a field schema stands for (through `$ref` and single `allOf` wrappers). */
export const resolve = deref;

/** The list schema at `path` of `kind`, when the schemas describe that path. */
function listSchemaAt(kind: string, path: readonly string[]): JsonSchema | undefined {
  const s = fieldSchemaAt(kind, path);
  return s?.type === 'array' ? s : undefined;
}

/**
 * The strategy for the list at `path` (field names from the object root, array steps as `[]`)
 * in an object of `kind`.
 */
export function listStrategy(kind: string, path: readonly string[]): ListStrategy {
  const list = listSchemaAt(kind, path);
  if (list) {
    const strategy = (list['x-kubernetes-patch-strategy'] ?? '').split(',');
    const key = list['x-kubernetes-patch-merge-key'];
    if (!strategy.includes('merge')) return { kind: 'atomic' };
    return key ? { kind: 'merge', key } : { kind: 'set' };
  }
  return fallbackStrategy(kind, path);
}

/** Field-name rules for paths the schemas do not describe. */
function fallbackStrategy(kind: string, path: readonly string[]): ListStrategy {
  const field = path[path.length - 1] ?? '';
  if (field === 'ports') {
    const parent = path[path.length - 2];
    if (parent === '[]' && /^(containers|initContainers|ephemeralContainers)$/.test(path[path.length - 3] ?? '')) return { kind: 'merge', key: 'containerPort' };
    if (kind === 'Service' && path.length === 2 && path[0] === 'spec') return { kind: 'merge', key: 'port' };
    return { kind: 'atomic' };
  }
  if (field === 'addresses' && kind === 'Node' && path[0] === 'status' && path.length === 2) return { kind: 'merge', key: 'type' };
  if (field === 'finalizers' && path.length !== 2) return { kind: 'atomic' };
  return BY_FIELD[field] ?? { kind: 'atomic' };
}
