/**
 * DELETE of one object and of a collection. Pods bound to a node are only marked
 * (deletionTimestamp + grace); the agent's final `gracePeriodSeconds=0` delete removes them.
 * Objects with finalizers are marked and removed once the last finalizer goes (see
 * {@link finishDeletionIfReady}, called after every update).
 */
import type { ServedResource, ServerContext } from '../context.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { badRequest, conflict, StatusError } from '../status.js';
import { invalidValue, notSupported, queryInt, queryOptionalBool, rfc3339, type FieldError } from '@nodelet/api';
import { dryRunErrors, optionsInvalid, parseResourceVersion } from '../request-options.js';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** json.Unmarshal's complaint about a DeleteOptions field of the wrong JSON type (400, as upstream). */
const wrongType = (field: string, got: unknown, goType: string): StatusError => {
  const jsonType = Array.isArray(got) ? 'array' : got === null ? 'null' : typeof got === 'object' ? 'object' : typeof got;
  return badRequest(`json: cannot unmarshal ${jsonType} into Go struct field DeleteOptions.${field} of type ${goType}`);
};

/**
 * DeleteOptions from the request body (a JSON DeleteOptions) and the query, as kube-apiserver
 * decodes and validates them: a body that is not a DeleteOptions or has a field of the wrong
 * type → 400; `ValidateDeleteOptions` (propagationPolicy, dryRun only `All`, orphanDependents
 * with propagationPolicy) → 422 `DeleteOptions.meta.k8s.io "" is invalid`. Body fields take
 * precedence; a query parameter fills what the body leaves unset (upstream reads only the body
 * when there is one; the query's dryRun is never dropped here).
 */
export function parseDeleteOptions(body: unknown, query: URLSearchParams): DeleteOptions {
  if (!isPlainObject(body)) throw badRequest('decoded object cannot be converted to DeleteOptions');
  const b = body;
  if (b.kind !== undefined && b.kind !== 'DeleteOptions') throw badRequest('decoded object cannot be converted to DeleteOptions');
  const opts: DeleteOptions = {};
  let grace: number | undefined;
  if (b.gracePeriodSeconds !== undefined && b.gracePeriodSeconds !== null) {
    if (typeof b.gracePeriodSeconds !== 'number' || !Number.isInteger(b.gracePeriodSeconds)) throw wrongType('gracePeriodSeconds', b.gracePeriodSeconds, 'int64');
    grace = b.gracePeriodSeconds;
  } else grace = queryInt(query, 'gracePeriodSeconds');
  // A negative grace period is taken as 1 s, as upstream's BeforeDelete does.
  if (grace !== undefined) opts.gracePeriodSeconds = grace < 0 ? 1 : grace;
  let orphan: boolean | undefined;
  if (b.orphanDependents !== undefined && b.orphanDependents !== null) {
    if (typeof b.orphanDependents !== 'boolean') throw wrongType('orphanDependents', b.orphanDependents, 'bool');
    orphan = b.orphanDependents;
  } else orphan = queryOptionalBool(query, 'orphanDependents');
  let policy: string | undefined;
  if (b.propagationPolicy !== undefined && b.propagationPolicy !== null) {
    if (typeof b.propagationPolicy !== 'string') throw wrongType('propagationPolicy', b.propagationPolicy, 'v1.DeletionPropagation');
    policy = b.propagationPolicy;
  } else policy = query.get('propagationPolicy') ?? undefined;
  if (b.preconditions !== undefined && b.preconditions !== null) {
    if (!isPlainObject(b.preconditions)) throw wrongType('preconditions', b.preconditions, 'v1.Preconditions');
    const { uid, resourceVersion } = b.preconditions;
    if (uid !== undefined && uid !== null && typeof uid !== 'string') throw wrongType('preconditions.uid', uid, 'types.UID');
    if (resourceVersion !== undefined && resourceVersion !== null && typeof resourceVersion !== 'string') throw wrongType('preconditions.resourceVersion', resourceVersion, 'string');
    if (typeof resourceVersion === 'string' && resourceVersion !== '') parseResourceVersion(resourceVersion);
    opts.preconditions = { ...(typeof uid === 'string' ? { uid } : {}), ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}) };
  }
  let dryRun: string[];
  if (b.dryRun !== undefined && b.dryRun !== null) {
    if (!Array.isArray(b.dryRun) || !b.dryRun.every((v) => typeof v === 'string')) throw wrongType('dryRun', b.dryRun, '[]string');
    dryRun = b.dryRun as string[];
  } else dryRun = query.getAll('dryRun');
  const errs: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) errs.push(invalidValue('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  if (policy !== undefined && !['Foreground', 'Background', 'Orphan'].includes(policy)) errs.push(notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  errs.push(...dryRunErrors(dryRun));
  if (errs.length) throw optionsInvalid('DeleteOptions', errs);
  if (orphan === true) opts.propagationPolicy = 'Orphan';
  if (policy !== undefined) opts.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  opts.dryRun = dryRun.length > 0;
  return opts;
}

function podGrace(pod: ApiObject, opts: DeleteOptions): number {
  const spec = (pod.spec ?? {}) as Json;
  const phase = (pod.status as Json | undefined)?.phase;
  // Unscheduled and finished pods have nothing on a node to stop: delete at once (as upstream).
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  return opts.gracePeriodSeconds ?? (spec.terminationGracePeriodSeconds as number | undefined) ?? 30;
}

/** Deletes (or marks for deletion) one object; returns the object as it is afterwards. */
export async function deleteObject(
  ctx: ServerContext,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  opts: DeleteOptions,
  /** Admission of the delete (NodeRestriction), given the stored object; throws to refuse. */
  admitDelete?: (current: ApiObject) => Promise<void>,
): Promise<{ object: ApiObject; removed: boolean }> {
  const { def, registry } = served;
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = await registry.get(namespace, name);
    await admitDelete?.(current);
    if (opts.preconditions?.uid && opts.preconditions.uid !== current.metadata.uid) {
      throw new StatusError(409, 'Conflict', `Precondition failed: UID in precondition: ${opts.preconditions.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
    }
    if (opts.preconditions?.resourceVersion && opts.preconditions.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(def.plural, def.group, name);
    }
    const grace = def.kind === 'Pod' ? podGrace(current, opts) : 0;
    const finalizers = [...(current.metadata.finalizers ?? [])];
    if (opts.propagationPolicy === 'Orphan' && !finalizers.includes('orphan') && !current.metadata.deletionTimestamp) finalizers.push('orphan');
    if (opts.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion') && !current.metadata.deletionTimestamp) finalizers.push('foregroundDeletion');
    // A namespace waits for its spec finalizers (the namespace controller empties it, then finalizes).
    const graceful = grace > 0 || finalizers.length > 0 || namespaceFinalizers(def, current) > 0;
    if (opts.dryRun && !graceful) return { object: current, removed: true };
    if (!graceful) {
      try {
        return { object: await registry.remove(current), removed: true };
      } catch (err) {
        if (err instanceof StatusError && err.reason === 'Conflict' && !opts.preconditions?.resourceVersion) continue;
        throw err;
      }
    }
    const existing = current.metadata.deletionTimestamp;
    const oldGrace = current.metadata.deletionGracePeriodSeconds;
    // Already terminating: only a shorter grace period changes anything.
    if (existing && (oldGrace === undefined || grace >= oldGrace) && jsonEqual(finalizers, current.metadata.finalizers ?? [])) {
      return { object: current, removed: false };
    }
    const now = ctx.now();
    const marked: ApiObject = {
      ...current,
      metadata: {
        ...current.metadata,
        deletionTimestamp: rfc3339(now + grace * 1000),
        deletionGracePeriodSeconds: grace,
        ...(finalizers.length ? { finalizers } : {}),
      },
    };
    if (def.kind === 'Namespace') marked.status = { ...((current.status ?? {}) as Json), phase: 'Terminating' };
    // A dry run answers with the object as the real delete would leave it, and writes nothing.
    if (opts.dryRun) return { object: marked, removed: false };
    const { object } = await registry.guaranteedUpdate(namespace, name, () => marked, { preconditionRV: current.metadata.resourceVersion }).catch((err: unknown) => {
      if (err instanceof StatusError && err.reason === 'Conflict') return { object: undefined };
      throw err;
    });
    if (!object) continue;
    return { object, removed: false };
  }
  throw conflict(def.plural, def.group, name);
}

function jsonEqual(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** How many `spec.finalizers` a Namespace still has (0 for every other kind). */
function namespaceFinalizers(def: { kind: string }, obj: ApiObject): number {
  if (def.kind !== 'Namespace') return 0;
  const f = (obj.spec as { finalizers?: unknown } | undefined)?.finalizers;
  return Array.isArray(f) ? f.length : 0;
}

/** After an update: removes an object whose deletion was only waiting for its finalizers (a namespace's spec ones too). */
export async function finishDeletionIfReady(served: ServedResource, obj: ApiObject): Promise<ApiObject | undefined> {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp || (meta.finalizers?.length ?? 0) > 0) return undefined;
  if (namespaceFinalizers(served.def, obj) > 0) return undefined;
  if (served.def.kind === 'Pod' && (meta.deletionGracePeriodSeconds ?? 0) > 0) return undefined;
  try {
    return await served.registry.remove(obj);
  } catch (err) {
    if (err instanceof StatusError && (err.reason === 'Conflict' || err.reason === 'NotFound')) return undefined;
    throw err;
  }
}
