/**
 * JSON merge patch (RFC 7386), `application/merge-patch+json`: the API server applies it to
 * stored objects and the in-memory test server to its fixtures, so both read a patch the same way.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `target` with `patch` merged in: an object in the patch merges key by key, `null` deletes a key,
 * anything else (arrays included) replaces. Pure: neither argument is changed; subtrees the patch
 * does not touch are shared with `target`, values taken from the patch are copies.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
