/**
 * DELETE of one object and of a collection. Pods bound to a node are only marked
 * (deletionTimestamp + grace); the agent's final `gracePeriodSeconds=0` delete removes them.
 * Objects with finalizers are marked and removed once the last finalizer goes (see
 * {@link finishDeletionIfReady}, called after every update).
 */
import type { ServedResource, ServerContext } from '../context.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { badRequest, conflict, StatusError } from '../status.js';
import { rfc3339 } from '@nodelet/api';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export function parseDeleteOptions(body: unknown, query: URLSearchParams): DeleteOptions {
  const b = isPlainObject(body) ? body : {};
  const opts: DeleteOptions = {};
  const grace = b.gracePeriodSeconds ?? (query.has('gracePeriodSeconds') ? Number(query.get('gracePeriodSeconds')) : undefined);
  if (grace !== undefined && grace !== null) {
    if (!Number.isInteger(grace) || (grace as number) < 0) throw badRequest('gracePeriodSeconds must be a non-negative integer');
    opts.gracePeriodSeconds = grace as number;
  }
  if (b.orphanDependents === true) opts.propagationPolicy = 'Orphan';
  const policy = b.propagationPolicy ?? query.get('propagationPolicy') ?? undefined;
  if (policy !== undefined && policy !== null) {
    if (!['Orphan', 'Background', 'Foreground'].includes(policy as string)) throw badRequest(`unsupported propagationPolicy "${String(policy)}"`);
    opts.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  }
  if (isPlainObject(b.preconditions)) opts.preconditions = b.preconditions as DeleteOptions['preconditions'];
  const dry = Array.isArray(b.dryRun) ? b.dryRun : query.getAll('dryRun');
  opts.dryRun = dry.includes('All');
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
    const graceful = grace > 0 || finalizers.length > 0 || def.kind === 'Namespace';
    if (opts.dryRun) return { object: current, removed: !graceful };
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

/** After an update: removes an object whose deletion was only waiting for its finalizers. */
export async function finishDeletionIfReady(served: ServedResource, obj: ApiObject): Promise<ApiObject | undefined> {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp || (meta.finalizers?.length ?? 0) > 0) return undefined;
  if (served.def.kind === 'Namespace') return undefined;
  if (served.def.kind === 'Pod' && (meta.deletionGracePeriodSeconds ?? 0) > 0) return undefined;
  try {
    return await served.registry.remove(obj);
  } catch (err) {
    if (err instanceof StatusError && (err.reason === 'Conflict' || err.reason === 'NotFound')) return undefined;
    throw err;
  }
}
