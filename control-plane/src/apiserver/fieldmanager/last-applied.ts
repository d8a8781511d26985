/**
 * The bridge between kubectl's client-side apply (the `last-applied-configuration` annotation)
 * and server-side apply, as kube-apiserver keeps it for the manager `kubectl`:
 *
 * - An apply by `kubectl` that conflicts only on fields the annotation holds with their live
 *   values (what `kubectl apply` set before, typically owned by `kubectl-client-side-apply`)
 *   takes them without `--force-conflicts`: the first `kubectl apply --server-side` of an object
 *   applied client-side succeeds, and kubectl then moves the old manager's fields over itself.
 * - After an apply by `kubectl`, an annotation already on the object is rewritten to the applied
 *   configuration, so a later client-side apply computes its patch from it.
 */
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { FieldSet } from './fieldset.js';
import { ApplyConflictError, applyManagedFields, conflictError, content, type Managed, type WriteContext } from './manager.js';
import { compare, toFieldSet } from './typed.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The manager kube-apiserver keeps the annotation in step for (others opt out by their name). */
const KUBECTL = 'kubectl';

/** applyManagedFields with the client-side apply upgrade and annotation sync above. */
export function applyWithLastApplied(c: WriteContext, live: ApiObject | undefined, config: ApiObject, manager: string, force: boolean): ApiObject {
  let out: ApiObject;
  try {
    out = applyManagedFields(c, live, config, manager, force);
  } catch (err) {
    const allowed = manager === KUBECTL && live && err instanceof ApplyConflictError ? lastAppliedFields(c, live) : undefined;
    if (!allowed) throw err;
    const remaining = new Map<Managed, FieldSet>();
    for (const [e, set] of (err as ApplyConflictError).conflicts) {
      const left = set.difference(allowed);
      if (!left.empty()) remaining.set(e, left);
    }
    if (remaining.size) throw conflictError(remaining);
    out = applyManagedFields(c, live, config, manager, true);
  }
  const annotations = out.metadata.annotations;
  if (manager === KUBECTL && annotations?.[LAST_APPLIED]) out.metadata.annotations = { ...annotations, [LAST_APPLIED]: lastAppliedOf(config) };
  return out;
}

/**
 * The fields of the annotation's configuration whose values the live object still has; undefined
 * without a readable annotation of this version.
 */
function lastAppliedFields(c: WriteContext, live: ApiObject): FieldSet | undefined {
  const raw = live.metadata.annotations?.[LAST_APPLIED];
  if (!raw) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isPlainObject(last) || last.apiVersion !== c.apiVersion) return undefined;
  const d = compare(c.types, last, content(live));
  return toFieldSet(c.types, last).difference(d.modified).difference(d.added).difference(d.removed);
}

/** The applied configuration without the annotation, as compact JSON with sorted keys (Go's encoding of a map). */
function lastAppliedOf(config: ApiObject): string {
  const copy = structuredClone(config) as Json;
  const meta = copy.metadata as Json;
  if (isPlainObject(meta.annotations)) delete meta.annotations[LAST_APPLIED];
  return JSON.stringify(sortKeys(copy));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}
