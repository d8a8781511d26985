/**
 * Field validation against the API schemas: the fields of a request body that its kind’s schema
 * does not declare, as kube-apiserver finds them when it decodes strictly. Pure; walks the body
 * once (no recursion deeper than the body, which the server already bounds).
 *
 *   unknownFields('io.k8s.api.apps.v1.Deployment', body) → ['spec.foo', 'spec.template.spec.containers[0].imagePullPolice']
 *   applyFieldErrors(…)                                   → ['.spec.foo: field not declared in schema'] (server-side apply’s form)
 */
import { REF_PREFIX, type JsonSchema } from './dsl.js';

export interface UnknownFieldsOptions {
  /**
   * The body is a merge or strategic-merge patch: keys starting with `$` (patch directives such
   * as `$patch`, `$setElementOrder/…`, `$retainKeys`) are not fields, and a `null` value deletes
   * a field rather than setting it, so it is never unknown.
   */
  patch?: boolean;
  /** Also delete each undeclared field from the body (in place), as decoding into a typed object drops it. */
  prune?: boolean;
}

/** Each schema collection's `$ref` targets by ref (the walk follows the same few refs for every body). */
const refsOf = new WeakMap<Readonly<Record<string, JsonSchema>>, Map<string, JsonSchema | undefined>>();

/** Follows `$ref` and single-element `allOf` wrappers to the schema that describes the value. */
function resolve(schemas: Readonly<Record<string, JsonSchema>>, s: JsonSchema | undefined): JsonSchema | undefined {
  for (let i = 0; s && i < 32; i++) {
    if (s.$ref) s = target(schemas, s.$ref);
    else if (s.allOf?.length === 1 && !s.properties) s = s.allOf[0];
    else return s;
  }
  return s;
}

function target(schemas: Readonly<Record<string, JsonSchema>>, ref: string): JsonSchema | undefined {
  let refs = refsOf.get(schemas);
  if (!refs) refsOf.set(schemas, (refs = new Map()));
  if (refs.has(ref)) return refs.get(ref);
  const s = schemas[ref.slice(REF_PREFIX.length)];
  refs.set(ref, s);
  return s;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Walk {
  schemas: Readonly<Record<string, JsonSchema>>;
  patch: boolean;
  prune: boolean;
  /** Path of a list element: `[3]` for decoding errors, `[name="web"]` for apply. */
  element(list: JsonSchema, item: unknown, index: number): string;
  /** Path of a field under `parent`. */
  field(parent: string, key: string): string;
  /**
   * The path walked to the current value: field names, and list elements as `element` gave them
   * (`fields[i]` false). Joined into a path only for an unknown field, which most bodies have none of.
   */
  segments: string[];
  fields: boolean[];
  out: string[];
}

function pathOf(w: Walk, key: string): string {
  let path = '';
  for (let i = 0; i < w.segments.length; i++) path = w.fields[i] ? w.field(path, w.segments[i]!) : path + w.segments[i]!;
  return w.field(path, key);
}

function walk(w: Walk, schema: JsonSchema | undefined, value: unknown): void {
  const s = resolve(w.schemas, schema);
  if (!s || s['x-kubernetes-preserve-unknown-fields']) return;
  if (Array.isArray(value)) {
    if (!s.items) return;
    for (let i = 0; i < value.length; i++) {
      w.segments.push(w.element(s, value[i], i));
      w.fields.push(false);
      walk(w, s.items, value[i]);
      w.segments.pop();
      w.fields.pop();
    }
    return;
  }
  if (!isObject(value)) return;
  const declared = s.properties;
  const each = declared ? undefined : s.additionalProperties;
  if (!declared && !each) return;
  for (const key of Object.keys(value)) {
    const v = value[key];
    let sub: JsonSchema | undefined;
    if (declared) {
      if (w.patch && (key.startsWith('$') || v === null)) continue;
      sub = declared[key];
      if (!sub) {
        w.out.push(pathOf(w, key));
        if (w.prune) delete value[key];
        continue;
      }
    } else sub = each as JsonSchema;
    w.segments.push(key);
    w.fields.push(true);
    walk(w, sub, v);
    w.segments.pop();
    w.fields.pop();
  }
}

/**
 * Paths of the fields in `value` that the definition `rootName` does not declare, in the form
 * of Go's strict decoder (`spec.template.spec.containers[0].foo`). Fields under an open object
 * (`x-kubernetes-preserve-unknown-fields`) and values of the wrong type are not reported.
 */
export function unknownFields(schemas: Readonly<Record<string, JsonSchema>>, rootName: string, value: unknown, o: UnknownFieldsOptions = {}): string[] {
  const w: Walk = {
    schemas,
    patch: !!o.patch,
    prune: !!o.prune,
    element: (_l, _item, i) => `[${i}]`,
    field: (parent, key) => (parent ? `${parent}.${key}` : key),
    segments: [],
    fields: [],
    out: [],
  };
  walk(w, schemas[rootName], value);
  return w.out;
}

/** structured-merge-diff's path element of a list item: `[key="value",…]` for map lists, `[i]` otherwise. */
function applyElement(list: JsonSchema, item: unknown, index: number): string {
  const keys = list['x-kubernetes-list-type'] === 'map' ? list['x-kubernetes-list-map-keys'] : undefined;
  if (!keys || !isObject(item)) return `[${index}]`;
  const parts = keys.filter((k) => item[k] !== undefined).map((k) => `${k}=${JSON.stringify(item[k])}`);
  return parts.length ? `[${parts.join(',')}]` : `[${index}]`;
}

/** Server-side apply’s errors for undeclared fields: `.spec.foo: field not declared in schema`. */
export function applyFieldErrors(schemas: Readonly<Record<string, JsonSchema>>, rootName: string, value: unknown): string[] {
  const w: Walk = { schemas, patch: false, prune: false, element: applyElement, field: (parent, key) => `${parent}.${key}`, segments: [], fields: [], out: [] };
  walk(w, schemas[rootName], value);
  return w.out.map((p) => `${p}: field not declared in schema`);
}
