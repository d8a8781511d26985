/**
 * Patch application by Content-Type (reference §9). Server-side apply (`apply`) is parsed here
 * and carried out by the field manager (../fieldmanager/manager.ts).
 */
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { badRequest, unsupportedMediaType, StatusError } from '../status.js';
import { MAX_NESTING_DEPTH, nestedDeeperThan, PATCH_MEDIA_TYPES, parseJson, parseMediaType, parseYaml } from '../media.js';
import { applyJsonPatch } from './json-patch.js';
import { strategicMergePatch } from './strategic-merge.js';
import { mergePatch } from '@nodelet/api';

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
