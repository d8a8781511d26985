/**
 * POST pods/<name>/eviction (policy/v1 Eviction): a delete that honours PodDisruptionBudgets, with
 * the semantics of kube-apiserver's eviction REST (pkg/registry/core/pod/storage/eviction.go):
 *
 *   pod Pending, Succeeded, Failed or already terminating ──▶ DisruptionTarget + delete (no budget check)
 *   otherwise: budgets selecting the pod ─┬─ none ─────────────▶ DisruptionTarget + delete
 *                                         ├─ more than one ────▶ 500 (not supported)
 *                                         └─ one ─┬─ pod not Ready and the budget is healthy (or AlwaysAllow)
 *                                                 │     ──▶ delete only if the pod is unchanged since it was read
 *                                                 └─ disruptionsAllowed > 0 ──▶ decrement + disruptedPods[pod]
 *                                                       (compare-and-swap on the budget's status) ──▶ delete
 *                                                    disruptionsAllowed = 0 ──▶ 429 TooManyRequests
 *
 * The disruptedPods entry tells the disruption controller not to count the pod as healthy while
 * its deletion is under way, so two evictions racing on one budget cannot both pass.
 */
import {
  DISRUPTION_BUDGET_CAUSE,
  pdbSelectsPod,
  rfc3339,
  podIsReady,
  updateDisruptionAllowedCondition,
  type Pod,
  type PodDisruptionBudget,
} from '@nodelet/api';
import type { RequestScope, ServedResource, ServerContext } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest, conflict, StatusError } from '../status.js';
import { MATCH_ALL } from '../filter.js';
import { admit } from '../admission/index.js';
import { deleteObject, parseDeleteOptions, type DeleteOptions } from './delete.js';
import { addWarnings, enforceFieldValidation } from '../field-validation.js';
import { writeOptionsOf } from '../request-options.js';

/** Conflicting writers (the controller, other evictions) are retried this many times, as upstream's EvictionsRetry. */
const MAX_ATTEMPTS = 20;
/** Budgets whose disruptedPods map is larger refuse evictions (upstream MaxDisruptedPodSize). */
export const MAX_DISRUPTED_POD_SIZE = 2000;
const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

/** 429 as upstream words it; `retryAfter` 0 means no Retry-After header (kubectl then waits 5 s itself). */
function tooManyRequests(causeMessage: string, retryAfter: number): StatusError {
  return new StatusError(
    429,
    'TooManyRequests',
    BUDGET_MESSAGE,
    { ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}), causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: causeMessage }] },
    retryAfter,
  );
}

const stillProcessing = (pdb: string): StatusError => tooManyRequests(`The disruption budget ${pdb} is still being processed by the server.`, 10);

const budgetForbidden = (pdb: string, why: string): StatusError =>
  new StatusError(403, 'Forbidden', `poddisruptionbudget.policy "${pdb}" is forbidden: ${why}`, { name: pdb, group: 'policy', kind: 'poddisruptionbudget' });

export async function handleEviction(s: RequestScope): Promise<void> {
  const { fieldValidation } = writeOptionsOf(s.url, 'CreateOptions');
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  addWarnings(s.res, enforceFieldValidation(fieldValidation, { group: 'policy', version: 'v1', kind: 'Eviction' }, body, 'object'));
  const name = s.name!;
  if (body.kind !== undefined && body.kind !== 'Eviction') throw badRequest(`not a Eviction object: ${String(body.kind)}`);
  const meta = isPlainObject(body.metadata) ? body.metadata : {};
  if (meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== s.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const bodyOpts = isPlainObject(body.deleteOptions) ? body.deleteOptions : {};
  const queryDry = s.url.searchParams.getAll('dryRun');
  if (Array.isArray(bodyOpts.dryRun) && bodyOpts.dryRun.length && queryDry.length && JSON.stringify(bodyOpts.dryRun) !== JSON.stringify(queryDry)) {
    throw new StatusError(500, 'InternalError', `Internal error occurred: Non-matching dry-run options in request and content: [${queryDry.join(' ')}] and [${bodyOpts.dryRun.join(' ')}]`);
  }
  const opts = parseDeleteOptions(bodyOpts, s.url.searchParams);
  await admit(s.ctx, { operation: 'CREATE', user: s.user, def: s.served.def, subresource: 'eviction', namespace: s.namespace, name, object: { metadata: {}, ...body } });

  const reply = await evict(s.ctx, s.served, s.namespace!, name, opts);
  sendJson(s.res, reply.code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: reply.code === 201 ? 'Success' : 'Failure', ...(reply.message ? { message: reply.message } : {}), code: reply.code });
}

/** Phases whose pods the budgets do not guard (canIgnorePDB): nothing of theirs is running, or they are going already. */
function canIgnoreBudget(pod: ApiObject): boolean {
  const phase = (pod.status as Json | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
}

/** Terminal or terminating pods cannot race into readiness, so their delete needs no resourceVersion pin. */
function mustPinResourceVersion(pod: ApiObject): boolean {
  const phase = (pod.status as Json | undefined)?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

const withResourceVersion = (opts: DeleteOptions, rv: string | undefined): DeleteOptions => ({ ...opts, preconditions: { ...opts.preconditions, resourceVersion: rv } });

async function evict(ctx: ServerContext, pods: ServedResource, namespace: string, name: string, opts: DeleteOptions): Promise<{ code: number; message?: string }> {
  const pinned = !!opts.preconditions?.resourceVersion;
  // 1. Pods the budgets do not guard are deleted at once (retried on conflict unless the caller pinned a version).
  let pod: ApiObject | undefined;
  for (let attempt = 0; ; attempt++) {
    pod = await pods.registry.get(namespace, name);
    if (!canIgnoreBudget(pod)) break;
    const deleteOpts = mustPinResourceVersion(pod) && !pinned ? withResourceVersion(opts, pod.metadata.resourceVersion) : opts;
    try {
      await addConditionAndDelete(ctx, pods, namespace, name, deleteOpts);
      return { code: 201 };
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'Conflict') || pinned || attempt + 1 >= MAX_ATTEMPTS) throw err;
    }
  }

  // 2. The budget that guards the pod, if any.
  const budgets = ctx.resource('policy', 'v1', 'poddisruptionbudgets');
  const matching = budgets
    ? (await budgets.registry.list({ namespace, filter: MATCH_ALL })).items.filter((b) => pdbSelectsPod(b as PodDisruptionBudget, pod as Pod, { emptySelectsAll: false }))
    : [];
  if (matching.length > 1) return { code: 500, message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' };
  let pinToPod = false;
  if (matching.length === 1) {
    const pdb = matching[0] as PodDisruptionBudget;
    const st = pdb.status;
    const unhealthyMayGo =
      !podIsReady(pod as Pod) &&
      (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((st?.currentHealthy ?? 0) >= (st?.desiredHealthy ?? 0) && (st?.desiredHealthy ?? 0) > 0));
    // An unready pod does not count as healthy: deleting it costs the budget nothing, as long
    // as it does not become ready before the delete (hence the resourceVersion pin).
    if (unhealthyMayGo) pinToPod = true;
    else await checkAndDecrement(ctx, budgets!, pdb, name, !!opts.dryRun);
  }

  // 3. The delete itself.
  const deleteOpts = pinToPod ? withResourceVersion(opts, pod.metadata.resourceVersion) : opts;
  try {
    await addConditionAndDelete(ctx, pods, namespace, name, deleteOpts);
  } catch (err) {
    if (err instanceof StatusError && err.reason === 'Conflict' && pinToPod && !pinned) throw stillProcessing(matching[0]!.metadata.name!);
    throw err;
  }
  return { code: 201 };
}

/**
 * Takes one disruption from the budget and records the pod in `disruptedPods`, by compare-and-swap
 * on the stored status; a lost race re-reads the budget and decides again.
 */
async function checkAndDecrement(ctx: ServerContext, budgets: ServedResource, initial: PodDisruptionBudget, podName: string, dryRun: boolean): Promise<void> {
  let pdb = initial;
  const pdbName = pdb.metadata.name!;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0) pdb = (await budgets.registry.get(pdb.metadata.namespace, pdbName)) as PodDisruptionBudget;
    const st = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(pdbName);
    if (st.disruptionsAllowed < 0) throw budgetForbidden(pdbName, 'pdb disruptions allowed is negative');
    if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
      throw budgetForbidden(pdbName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    }
    if (st.disruptionsAllowed === 0) throw tooManyRequests(`The disruption budget ${pdbName} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently`, 0);
    if (dryRun) return;
    const now = rfc3339(ctx.now());
    const next: PodDisruptionBudget = structuredClone(pdb);
    const status = (next.status ??= { ...st });
    status.disruptionsAllowed--;
    if (status.disruptionsAllowed === 0) updateDisruptionAllowedCondition(status, now);
    status.disruptedPods = { ...status.disruptedPods, [podName]: now };
    try {
      await budgets.registry.guaranteedUpdate(pdb.metadata.namespace, pdbName, () => next as ApiObject, { preconditionRV: pdb.metadata.resourceVersion });
      return;
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'Conflict')) throw err;
    }
  }
  throw new StatusError(504, 'Timeout', `couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`, { retryAfterSeconds: 10 }, 10);
}

/**
 * Marks the pod DisruptionTarget=True (EvictionByEvictionAPI) on its latest version, then deletes
 * it. The condition write honours the delete's preconditions, and a resourceVersion precondition
 * moves to the version the condition write produced (that write is ours).
 */
async function addConditionAndDelete(ctx: ServerContext, pods: ServedResource, namespace: string, name: string, opts: DeleteOptions): Promise<void> {
  let deleteOpts = opts;
  if (!opts.dryRun) {
    const { object, changed } = await pods.registry.guaranteedUpdate(namespace, name, (latest) => {
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== latest.metadata.uid) {
        throw new StatusError(409, 'Conflict', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${latest.metadata.uid ?? ''}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== latest.metadata.resourceVersion) throw conflict('pods', '', name);
      return withDisruptionTarget(latest, rfc3339(ctx.now()));
    });
    if (changed && opts.preconditions?.resourceVersion) deleteOpts = withResourceVersion(opts, object.metadata.resourceVersion);
  }
  await deleteObject(ctx, pods, namespace, name, deleteOpts);
}

/** The pod with DisruptionTarget=True set (podutil.UpdatePodCondition), or undefined when it already has exactly that. */
function withDisruptionTarget(pod: ApiObject, now: string): ApiObject | undefined {
  const status = (pod.status ?? {}) as Json;
  const conditions = Array.isArray(status.conditions) ? [...(status.conditions as Json[])] : [];
  const next = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };
  const i = conditions.findIndex((c) => c.type === 'DisruptionTarget');
  const cur = i >= 0 ? conditions[i]! : undefined;
  if (cur && cur.status === next.status && cur.reason === next.reason && cur.message === next.message) return undefined;
  const merged = { ...next, lastProbeTime: null, lastTransitionTime: cur && cur.status === next.status ? cur.lastTransitionTime : now };
  if (i >= 0) conditions[i] = merged;
  else conditions.push(merged);
  pod.status = { ...status, conditions };
  return pod;
}
