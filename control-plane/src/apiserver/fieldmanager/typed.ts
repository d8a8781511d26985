/**
 * Objects seen through their schema, as server-side apply sees them: which lists are atomic,
 * sets or associative (keyed) lists, and which maps are atomic. From that: the field set an
 * applied configuration sets, the comparison of two objects (added, modified, removed fields),
 * the merge of an applied configuration into a live object, and the removal of fields.
 *
 * Schema paths are field names from the root with `[]` for a list's items (as merge-keys.ts).
 */
import { isPlainObject, jsonEqual, type Json } from '../object.js';
import { fieldSchemaAt, kindHasSchema, listStrategy, resolve } from '../patch/merge-keys.js';
import { FieldSet, pathString, type FieldPath, type PathElement } from './fieldset.js';
import type { StructuralSchema } from '../apiextensions/schema.js';
import type { ResourceDef } from '../resource.js';

export type ListType = { kind: 'atomic' } | { kind: 'set' } | { kind: 'map'; keys: readonly string[]; defaults: Readonly<Json> };

/** What the schema says of a path. */
export interface TypeInfo {
  list(path: readonly string[]): ListType;
  /** The object at `path` is replaced whole (`x-kubernetes-map-type: atomic`). */
  atomicMap(path: readonly string[]): boolean;
  /** The object at `path` is a struct (named fields), not a map of arbitrary keys. */
  struct(path: readonly string[]): boolean;
}

const ATOMIC: ListType = { kind: 'atomic' };

/**
 * What upstream deduces of an object with no schema: every list atomic, every map granular.
 */
export const DEDUCED: TypeInfo = { list: () => ATOMIC, atomicMap: () => false, struct: () => false };

/**
 * The served schema of `kind` (the one /openapi/v3 publishes): `x-kubernetes-list-type` and
 * `-list-map-keys` first, then the patch strategy and merge key (as upstream converts a schema
 * without list types), then merge-keys.ts's fallback for paths the schemas do not describe.
 * A kind with no schema is deduced.
 */
export function typesOfKind(kind: string): TypeInfo {
  let t = KIND_TYPES.get(kind);
  if (!t) KIND_TYPES.set(kind, (t = kindHasSchema(kind) ? memoised(schemaTypesOfKind(kind)) : DEDUCED));
  return t;
}

/** The built-in kinds' types (their schemas never change while the server runs). */
const KIND_TYPES = new Map<string, TypeInfo>();

/** Answers remembered per path, at most this many paths per kind (map keys such as label names are paths too). */
const MEMO_PATHS = 4096;

interface MemoNode {
  next?: Map<string, MemoNode>;
  list?: ListType;
  atomicMap?: boolean;
  struct?: boolean;
}

/**
 * `t` with its answers remembered by path, in a trie of path steps: the field manager asks the
 * same few questions for every field of every write, and each answer walks the schema from the
 * root. Past MEMO_PATHS paths, new ones are answered without being remembered.
 */
function memoised(t: TypeInfo): TypeInfo {
  const root: MemoNode = {};
  let paths = 0;
  const nodeOf = (path: readonly string[]): MemoNode | undefined => {
    let n = root;
    for (const step of path) {
      let c = n.next?.get(step);
      if (!c) {
        if (paths >= MEMO_PATHS) return undefined;
        paths++;
        (n.next ??= new Map()).set(step, (c = {}));
      }
      n = c;
    }
    return n;
  };
  return {
    list(path) {
      const n = nodeOf(path);
      return n ? (n.list ??= t.list(path)) : t.list(path);
    },
    atomicMap(path) {
      const n = nodeOf(path);
      return n ? (n.atomicMap ??= t.atomicMap(path)) : t.atomicMap(path);
    },
    struct(path) {
      const n = nodeOf(path);
      return n ? (n.struct ??= t.struct(path)) : t.struct(path);
    },
  };
}

function schemaTypesOfKind(kind: string): TypeInfo {
  return {
    list(path) {
      const s = fieldSchemaAt(kind, path);
      const listType = s?.['x-kubernetes-list-type'];
      const keys = s?.['x-kubernetes-list-map-keys'];
      if (s?.type === 'array' && listType === 'map' && keys?.length) return { kind: 'map', keys: [...keys].sort(), defaults: keyDefaults(s.items, keys) };
      if (s?.type === 'array' && (listType === 'set' || listType === 'atomic')) return { kind: listType };
      const strategy = listStrategy(kind, path);
      if (strategy.kind !== 'merge') return strategy;
      return { kind: 'map', keys: [strategy.key], defaults: keyDefaults(s?.items, [strategy.key]) };
    },
    atomicMap(path) {
      const s = fieldSchemaAt(kind, path);
      return s?.['x-kubernetes-map-type'] === 'atomic' || resolve(s)?.['x-kubernetes-map-type'] === 'atomic';
    },
    struct(path) {
      return !!resolve(fieldSchemaAt(kind, path))?.properties;
    },
  };
}

/** The schema defaults of an item's key fields (`protocol: TCP` of a port). */
function keyDefaults(items: Parameters<typeof resolve>[0], keys: readonly string[]): Json {
  return defaultsOf(resolve(items)?.properties ?? {}, keys);
}

function defaultsOf(props: Readonly<Record<string, { default?: unknown }>>, keys: readonly string[]): Json {
  const out: Json = {};
  for (const k of keys) if (props[k]?.default !== undefined) out[k] = props[k]!.default;
  return out;
}

/** The node of a CRD's structural schema at `path`; undefined where it does not describe the path. */
function structuralAt(root: StructuralSchema | undefined, path: readonly string[]): StructuralSchema | undefined {
  let s = root;
  for (const step of path) {
    if (!s) return undefined;
    s = step === '[]' ? s.items : (s.properties?.[step] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined));
  }
  return s;
}

/**
 * The types of a custom resource version from its structural schema, as upstream builds a typed
 * schema per CRD version: `x-kubernetes-list-type` (atomic when unset), `-list-map-keys`,
 * `x-kubernetes-map-type`; `metadata` is ObjectMeta's (owner references keyed by uid, finalizers a
 * set) whatever the CRD says of it; paths the schema does not describe (below
 * `x-kubernetes-preserve-unknown-fields`) are deduced.
 */
export function typesOfSchema(root: StructuralSchema | undefined): TypeInfo {
  const meta = typesOfKind('ConfigMap');
  const isMeta = (path: readonly string[]): boolean => path[0] === 'metadata';
  return {
    list(path) {
      if (isMeta(path)) return meta.list(path);
      const s = structuralAt(root, path);
      const keys = s?.['x-kubernetes-list-map-keys'];
      switch (s?.['x-kubernetes-list-type']) {
        case 'map':
          return keys?.length ? { kind: 'map', keys: [...keys].sort(), defaults: defaultsOf(s.items?.properties ?? {}, keys) } : ATOMIC;
        case 'set':
          return { kind: 'set' };
        default:
          return ATOMIC;
      }
    },
    atomicMap(path) {
      return isMeta(path) ? meta.atomicMap(path) : structuralAt(root, path)?.['x-kubernetes-map-type'] === 'atomic';
    },
    struct(path) {
      return isMeta(path) ? meta.struct(path) : !!structuralAt(root, path)?.properties;
    },
  };
}

/** The types of the objects `def` serves: a custom resource's from its version's schema, a built-in kind's from its served schema. */
export function typesOfDef(def: ResourceDef): TypeInfo {
  return def.custom ? typesOfSchema(def.custom.schema) : typesOfKind(def.kind);
}

/**
 * The path element of a list item, or undefined when an associative list's item lacks a key
 * (and the schema has no default for it).
 */
export function elementOf(list: ListType, item: unknown, index: number): PathElement | undefined {
  if (list.kind === 'set') return `v:${JSON.stringify(item)}`;
  if (list.kind === 'map') {
    if (!isPlainObject(item)) return undefined;
    const key: Json = {};
    for (const k of list.keys) {
      const v = item[k] ?? list.defaults[k];
      if (v === undefined || v === null) return undefined;
      key[k] = v;
    }
    return `k:${JSON.stringify(key)}`;
  }
  return `i:${index}`;
}

/** Each item of a non-atomic list with its path element (items without one are skipped). */
function elements(list: ListType, items: readonly unknown[]): Map<PathElement, unknown> {
  const out = new Map<PathElement, unknown>();
  items.forEach((item, i) => {
    const pe = elementOf(list, item, i);
    if (pe !== undefined) out.set(pe, item);
  });
  return out;
}

/**
 * Walks the members of `v` into `set`, at `pe` under `parent` (the set's root when `pe` is
 * undefined). `added` (a comparison's new subtree) counts maps and empty objects themselves as
 * upstream's comparison does; otherwise (an applied configuration) only scalars, atomic values and
 * list items are members. It inserts by set node, not by path from the root: this runs for every
 * field of every write.
 */
function collectAt(t: TypeInfo, v: unknown, sp: readonly string[], parent: FieldSet, pe: PathElement | undefined, added: boolean): void {
  // No closures here (this runs per field); a member at the root is the empty path, which no set holds.
  if (Array.isArray(v)) {
    const list = t.list(sp);
    if (list.kind === 'atomic') {
      if (pe !== undefined) parent.members.add(pe);
      return;
    }
    if (v.length === 0) return;
    const node = pe === undefined ? parent : parent.child(pe);
    const itemSp = list.kind === 'map' ? [...sp, '[]'] : sp;
    for (const [ipe, item] of elements(list, v)) {
      node.members.add(ipe);
      if (list.kind === 'map') collectAt(t, item, itemSp, node, ipe, added);
    }
    return;
  }
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    if (t.atomicMap(sp) || (added && keys.length === 0)) {
      if (pe !== undefined) parent.members.add(pe);
      return;
    }
    if (added && pe !== undefined && !t.struct(sp)) parent.members.add(pe);
    let node: FieldSet | undefined;
    for (const k of keys) {
      const x = v[k];
      if (x === undefined) continue;
      node ??= pe === undefined ? parent : parent.child(pe);
      collectAt(t, x, [...sp, k], node, `f:${k}`, added);
    }
    return;
  }
  if (pe !== undefined) parent.members.add(pe);
}

/** Walks the members of `v` at `fp` into `set` (see collectAt). */
function collect(t: TypeInfo, v: unknown, sp: readonly string[], fp: FieldPath, set: FieldSet, added: boolean): void {
  if (fp.length === 0) return collectAt(t, v, sp, set, undefined, added);
  let parent = set;
  for (let i = 0; i < fp.length - 1; i++) parent = parent.child(fp[i]!);
  collectAt(t, v, sp, parent, fp[fp.length - 1], added);
}

/**
 * The fields an applied configuration sets: its scalars, its atomic lists and maps, and the
 * items of its keyed lists and sets (not the structs and granular maps holding them).
 */
export function toFieldSet(t: TypeInfo, obj: Json): FieldSet {
  const set = new FieldSet();
  collect(t, obj, [], [], set, false);
  return set;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** What changes from `a` to `b`; an added map or list item counts itself, a removed one everything in it. */
export function compare(t: TypeInfo, a: Json, b: Json): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  diff(t, a, b, [], [], out);
  return out;
}

function diff(t: TypeInfo, a: unknown, b: unknown, sp: readonly string[], fp: FieldPath, out: Comparison): void {
  // The same value on both sides (a status write keeps the stored spec object) changes nothing.
  if (a === b) return;
  if (a === undefined) return collect(t, b, sp, fp, out.added, true);
  if (b === undefined) return removedAll(t, a, sp, fp, out.removed);
  if (Array.isArray(a) && Array.isArray(b)) {
    const list = t.list(sp);
    if (list.kind !== 'atomic') {
      const ea = elements(list, a);
      const eb = elements(list, b);
      for (const [pe, item] of eb) {
        const p = [...fp, pe];
        if (!ea.has(pe)) out.added.insert(p);
        if (list.kind === 'map') diff(t, ea.get(pe), item, [...sp, '[]'], p, out);
      }
      for (const [pe, item] of ea) if (!eb.has(pe)) removedAll(t, item, [...sp, '[]'], [...fp, pe], out.removed, list.kind === 'map');
      return;
    }
  } else if (isPlainObject(a) && isPlainObject(b) && !t.atomicMap(sp)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(t, a[k], b[k], [...sp, k], [...fp, `f:${k}`], out);
    return;
  }
  if (!jsonEqual(a, b)) out.modified.insert(fp);
}

function removedAll(t: TypeInfo, v: unknown, sp: readonly string[], fp: FieldPath, set: FieldSet, descend = true): void {
  set.insert(fp);
  if (!descend) return;
  const inner = new FieldSet();
  collect(t, v, sp, fp, inner, true);
  for (const p of inner.paths()) set.insert(p);
}

/**
 * `config` merged into `live`: scalars, atomic lists and atomic maps are replaced, granular maps
 * merged field by field, keyed lists and sets item by item (live items keep their place, new ones
 * follow in the configuration's order). A null in the configuration removes the field.
 */
export function merge(t: TypeInfo, live: unknown, config: unknown, sp: readonly string[] = []): unknown {
  if (config === undefined) return live;
  if (Array.isArray(config) && Array.isArray(live)) {
    const list = t.list(sp);
    if (list.kind === 'atomic') return structuredClone(config);
    const ec = elements(list, config);
    const out: unknown[] = [];
    const seen = new Set<PathElement>();
    live.forEach((item, i) => {
      const pe = elementOf(list, item, i);
      if (pe !== undefined && ec.has(pe)) {
        seen.add(pe);
        out.push(list.kind === 'map' ? merge(t, item, ec.get(pe), [...sp, '[]']) : item);
      } else out.push(item);
    });
    for (const [pe, item] of ec) if (!seen.has(pe)) out.push(structuredClone(item));
    return out;
  }
  if (isPlainObject(config) && isPlainObject(live) && !t.atomicMap(sp)) {
    const out: Json = { ...live };
    for (const [k, v] of Object.entries(config)) {
      const m = v === null ? undefined : merge(t, live[k], v, [...sp, k]);
      if (m === undefined) delete out[k];
      else out[k] = m;
    }
    return out;
  }
  return config === null ? undefined : structuredClone(config);
}

/**
 * Removes each path of `paths` from `obj` (in place): a field, or a list item by its element.
 * Maps and lists emptied by a removal go too (upstream's typed objects omit them).
 */
export function removePaths(t: TypeInfo, obj: Json, paths: Iterable<FieldPath>): void {
  for (const p of paths) removeOne(t, obj, [], p);
}

function removeOne(t: TypeInfo, v: unknown, sp: readonly string[], p: FieldPath): boolean {
  const [pe, ...rest] = p;
  if (pe === undefined) return false;
  if (isPlainObject(v) && pe.startsWith('f:')) {
    const k = pe.slice(2);
    if (!(k in v)) return false;
    if (rest.length === 0 || removeOne(t, v[k], [...sp, k], rest)) {
      if (rest.length === 0 || isEmptyContainer(v[k])) delete v[k];
    }
    return isEmptyContainer(v);
  }
  if (Array.isArray(v)) {
    const list = t.list(sp);
    const i = v.findIndex((item, idx) => elementOf(list, item, idx) === pe);
    if (i < 0) return false;
    if (rest.length === 0) v.splice(i, 1);
    else removeOne(t, v[i], [...sp, '[]'], rest);
    return v.length === 0;
  }
  return false;
}

const isEmptyContainer = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);

/**
 * What upstream refuses in an applied configuration's keyed lists, in structured-merge-diff's
 * words: an item without one of the keys (and no schema default for it), two items with the same
 * keys.
 */
export function applyConfigErrors(t: TypeInfo, config: Json): string[] {
  const out: string[] = [];
  const walk = (v: unknown, sp: readonly string[], fp: FieldPath): void => {
    if (Array.isArray(v)) {
      const list = t.list(sp);
      if (list.kind !== 'map') return;
      const seen = new Set<PathElement>();
      v.forEach((item, i) => {
        const pe = elementOf(list, item, i);
        if (pe === undefined) {
          const missing = isPlainObject(item) ? list.keys.find((k) => (item[k] ?? list.defaults[k]) == null) : undefined;
          out.push(missing ? `${pathString(fp)}: element ${i}: associative list with keys has an element that omits key field ${JSON.stringify(missing)} (and doesn't have default value)` : `${pathString(fp)}: element ${i}: expected an object in an associative list`);
          return;
        }
        if (seen.has(pe)) out.push(`${pathString(fp)}: duplicate entries for key ${pathString([pe])}`);
        seen.add(pe);
        walk(item, [...sp, '[]'], [...fp, pe]);
      });
    } else if (isPlainObject(v) && !t.atomicMap(sp)) {
      for (const [k, x] of Object.entries(v)) walk(x, [...sp, k], [...fp, `f:${k}`]);
    }
  };
  walk(config, [], []);
  return out;
}
