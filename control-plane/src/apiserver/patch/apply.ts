/**
 * Patch application by Content-Type (reference §9) and the minimal server-side apply.
 *
 * Server-side apply here is create-or-merge: the applied configuration is merged into the live
 * object with strategic-merge list semantics and the manager's managedFields entry is replaced.
 * Fields a manager stops applying are NOT removed and conflicts between managers are not
 * detected (documented in docs/apiserver.md).
 */
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { badRequest, unsupportedMediaType, StatusError } from '../status.js';
import { MAX_NESTING_DEPTH, nestedDeeperThan, PATCH_MEDIA_TYPES, parseJson, parseMediaType, parseYaml } from '../media.js';
import { applyJsonPatch } from './json-patch.js';
import { listStrategy } from './merge-keys.js';
import { strategicMergePatch } from './strategic-merge.js';
import { mergePatch, rfc3339 } from '@nodelet/api';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export function patchTypeOf(contentType: string | undefined): PatchType {
  const t = parseMediaType(contentType ?? '').type;
  switch (t) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      if (t.endsWith('cbor')) break;
      return 'apply';
  }
  throw unsupportedMediaType(t || '<none>', PATCH_MEDIA_TYPES);
}

export function parsePatchBody(type: PatchType, body: Buffer): unknown {
  const value = type === 'apply' ? parseYaml(body) : parseJson(body);
  if (type === 'json') {
    if (!Array.isArray(value)) throw badRequest('json patch must be a JSON array of operations');
  } else if (!isPlainObject(value)) {
    throw badRequest('patch body must be a JSON object');
  }
  return value;
}

/** Applies a parsed non-apply patch to `original` (not mutated). */
export function applyPatch(type: Exclude<PatchType, 'apply'>, original: ApiObject, patch: unknown, kind: string): ApiObject {
  let result: unknown;
  if (type === 'json') {
    result = applyJsonPatch(original, patch as unknown[]);
  } else if (type === 'merge') {
    result = mergePatch(original, patch);
  } else {
    result = strategicMergePatch(original as Json, patch, kind);
  }
  if (!isPlainObject(result) || !isPlainObject(result.metadata)) throw badRequest('the patched object is not a valid object');
  // A JSON patch can copy a deep subtree under itself; what comes out must still decode as a body does.
  if (nestedDeeperThan(result, MAX_NESTING_DEPTH)) throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: the patched object exceeds the max depth of ${MAX_NESTING_DEPTH}`);
  return result as ApiObject;
}

/** Server-side apply onto a live object: SMP-style merge of the applied configuration. */
export function applyConfiguration(live: ApiObject, applied: ApiObject, kind: string): ApiObject {
  return strategicMergePatch(live as Json, applied, kind) as ApiObject;
}

/** Replaces `manager`'s managedFields entry with one describing `applied` (FieldsV1 form). */
export function recordManagedFields(obj: ApiObject, applied: Json, manager: string, operation: 'Apply' | 'Update', apiVersion: string, now: number, subresource?: string): void {
  const others = (obj.metadata.managedFields ?? []).filter((e) => !(e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? '')));
  const { metadata: appliedMeta, apiVersion: _a, kind: _k, ...rest } = applied;
  const metaFields: Json = {};
  if (isPlainObject(appliedMeta)) for (const k of ['labels', 'annotations']) if (isPlainObject(appliedMeta[k])) metaFields[`f:${k}`] = fieldsOf(appliedMeta[k], kind(obj), [k]);
  const fields: Json = { ...(Object.keys(metaFields).length ? { 'f:metadata': metaFields } : {}), ...(fieldsOf(rest, kind(obj), []) as Json) };
  obj.metadata.managedFields = [
    ...others,
    { manager, operation, apiVersion, time: rfc3339(now), fieldsType: 'FieldsV1', fieldsV1: fields, ...(subresource ? { subresource } : {}) },
  ];
}

const kind = (o: ApiObject): string => o.kind ?? '';

function fieldsOf(v: unknown, k: string, path: string[]): unknown {
  if (Array.isArray(v)) {
    const strategy = listStrategy(k, path);
    const out: Json = {};
    for (const item of v) {
      if (strategy.kind === 'merge' && isPlainObject(item)) out[`k:${JSON.stringify({ [strategy.key]: item[strategy.key] })}`] = { '.': {}, ...(fieldsOf(item, k, [...path, '[]']) as Json) };
      else if (strategy.kind === 'set') out[`v:${JSON.stringify(item)}`] = {};
    }
    return out;
  }
  if (!isPlainObject(v)) return {};
  const out: Json = {};
  for (const [key, x] of Object.entries(v)) out[`f:${key}`] = fieldsOf(x, k, [...path, key]);
  return out;
}
