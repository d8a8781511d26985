/**
 * Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) for JSON objects of the
 * served kinds: maps merge recursively (`null` deletes), lists merge by their merge key, and the
 * directives `$patch` (replace/delete/merge), `$setElementOrder/<list>`, `$retainKeys` and
 * `$deleteFromPrimitiveList/<list>` are honoured. Pure; returns a new object.
 *
 * Linear in the sizes of the object and the patch: list items are found through maps, never by
 * scanning, so a 3 MiB patch of list items cannot cost (items × items) steps.
 */
import { cloneJson, isPlainObject, type Json } from '../object.js';
import { badRequest } from '../status.js';
import { listStrategy } from './merge-keys.js';

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

export function strategicMergePatch(original: Json, patch: unknown, kind: string): Json {
  if (!isPlainObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  return mergeMap(cloneJson(original), patch, kind, []);
}

function mergeMap(original: Json, patch: Json, kind: string, path: string[]): Json {
  const directive = patch.$patch;
  if (directive === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return stripDirectives(rest) as Json;
  }
  if (directive === 'delete') return {};
  if (directive !== undefined && directive !== 'merge') throw badRequest(`unknown patch directive "${String(directive)}"`);
  const out = original;
  const orders: Array<[string, unknown[]]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith(SET_ORDER)) {
      if (!Array.isArray(value)) throw badRequest(`${key} must be a list`);
      orders.push([key.slice(SET_ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(value)) throw badRequest(`${key} must be a list`);
      const drop = new Set(value);
      if (Array.isArray(out[field])) out[field] = (out[field] as unknown[]).filter((v) => !drop.has(v));
      continue;
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    const cur = out[key];
    const childPath = [...path, key];
    if (Array.isArray(value)) {
      out[key] = mergeList(Array.isArray(cur) ? cur : [], value, kind, childPath);
    } else if (isPlainObject(value)) {
      out[key] = isPlainObject(cur) ? mergeMap(cur, value, kind, childPath) : mergeMap({}, value, kind, childPath);
    } else {
      out[key] = value;
    }
  }
  for (const [field, order] of orders) {
    if (Array.isArray(out[field])) out[field] = applyOrder(out[field] as unknown[], order, kind, [...path, field]);
  }
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw badRequest('$retainKeys must be a list');
    const keep = new Set(retain);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], kind: string, path: string[]): unknown[] {
  const strategy = listStrategy(kind, path);
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map(stripDirectives);
  }
  if (strategy.kind === 'set') {
    const out = [...original];
    const present = new Set(out);
    for (const v of patch) {
      if (present.has(v)) continue;
      present.add(v);
      out.push(v);
    }
    return out;
  }
  if (strategy.kind === 'atomic') return patch.map(stripDirectives);
  const key = strategy.key;
  // Slots of `out` by merge key, first first; a deleted item leaves a hole removed at the end.
  const out: unknown[] = [...original];
  const slots = new Map<unknown, number[]>();
  const slot = (keyValue: unknown, i: number): void => {
    const list = slots.get(keyValue);
    if (list) list.push(i);
    else slots.set(keyValue, [i]);
  };
  out.forEach((o, i) => isPlainObject(o) && slot(o[key], i));
  const removed = new Set<number>();
  const itemPath = [...path, '[]'];
  for (const item of patch) {
    if (!isPlainObject(item)) throw badRequest(`list ${path.join('.')} items must be objects with merge key "${key}"`);
    const keyValue = item[key];
    if (keyValue === undefined) throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const idx = slots.get(keyValue)?.[0];
    if (item.$patch === 'delete') {
      if (idx !== undefined) {
        slots.get(keyValue)!.shift();
        removed.add(idx);
      }
      continue;
    }
    if (idx !== undefined) out[idx] = mergeMap(out[idx] as Json, item, kind, itemPath);
    else {
      slot(keyValue, out.length);
      out.push(mergeMap({}, item, kind, itemPath));
    }
  }
  return removed.size ? out.filter((_, i) => !removed.has(i)) : out;
}

/** Orders `list` like `order` (by merge key or value); items not named keep their place after. */
function applyOrder(list: unknown[], order: unknown[], kind: string, path: string[]): unknown[] {
  const strategy = listStrategy(kind, path);
  const keyOf = (v: unknown): unknown => (strategy.kind === 'merge' && isPlainObject(v) ? v[strategy.key] : v);
  const position = new Map<unknown, number>();
  order.forEach((v, i) => position.has(keyOf(v)) || position.set(keyOf(v), i));
  const indexed = list.map((v, i) => ({ v, i, o: position.get(keyOf(v)) ?? -1 }));
  indexed.sort((a, b) => {
    if (a.o >= 0 && b.o >= 0) return a.o - b.o;
    if (a.o >= 0) return -1;
    if (b.o >= 0) return 1;
    return a.i - b.i;
  });
  return indexed.map((x) => x.v);
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isPlainObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}
