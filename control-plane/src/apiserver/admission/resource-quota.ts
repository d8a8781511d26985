/**
 * The ResourceQuota admission plugin (upstream plugin/pkg/admission/resourcequota), last in the
 * chain. For a create (or an update that grows usage) in a namespace with quotas:
 *
 *   1. each quota that matches the object (evaluator: scopes, resources) must have its usage
 *      counted (`status unknown for quota` until the quota controller has filled status.used);
 *   2. a pod must set the requests/limits a matching quota constrains (`failed quota: q: must
 *      specify requests.cpu for: app`);
 *   3. used + requested must stay within hard (`exceeded quota: q, requested: pods=1, used:
 *      pods=2, limited: pods=2`), all 403;
 *   4. the new usage is written to each quota's status with a compare-and-swap on its
 *      resourceVersion (Registry.guaranteedUpdate re-reads and re-checks on a conflict), so two
 *      creates racing for the last slot cannot both pass.
 *
 * A pod's in-place resize (`pods/resize`) is judged as an update of the pod.
 *
 * A write that fails after admission leaves the charge in status.used until the quota controller
 * recomputes it (as upstream). Deletes are not charged: the controller gives usage back.
 */
import { addLists, exceededNames, isZeroList, matchingResources, maskList, objectUsage, podConstraintProblem, printList, subtractLists, type ResourceList, type ResourceQuota } from '@nodelet/api';
import type { ServerContext } from '../context.js';
import { MATCH_ALL } from '../filter.js';
import { listMirrored } from '../mirror.js';
import { isPlainObject, type ApiObject } from '../object.js';
import { forbidden, StatusError } from '../status.js';
import type { AdmissionPlugin, AdmissionRequest } from './types.js';

const listOf = (v: unknown): ResourceList => (isPlainObject(v) ? (v as ResourceList) : {});

/** What `r` adds to quota `q`, limited to the quota's hard names (empty: nothing to charge). */
function requestedOf(ctx: ServerContext, r: AdmissionRequest, q: ResourceQuota): { names: string[]; delta: ResourceList } {
  const { group, plural } = r.def;
  const obj = r.object!;
  const names = matchingResources(q, group, plural, obj);
  if (!names.length) return { names, delta: {} };
  const now = ctx.now();
  let delta = maskList(objectUsage(group, plural, obj, now), names);
  if (r.operation === 'UPDATE' && r.oldObject) {
    const oldNames = matchingResources(q, group, plural, r.oldObject);
    if (oldNames.length) delta = maskList(subtractLists(delta, maskList(objectUsage(group, plural, r.oldObject, now), oldNames)), names);
  }
  return { names, delta };
}

/**
 * The checks of one quota against `delta`: 403 when the status is not counted yet, a pod lacks
 * constrained resources, or the new usage exceeds hard. Returns the new used list.
 */
function checked(r: AdmissionRequest, q: ResourceQuota, names: readonly string[], delta: ResourceList): ResourceList {
  const who = `${r.def.group ? `${r.def.plural}.${r.def.group}` : r.def.plural} "${r.object!.metadata.name ?? ''}"`;
  const hard = listOf(q.status?.hard);
  const used = listOf(q.status?.used);
  const quotaName = q.metadata.name ?? '';
  const unknown = names.filter((n) => used[n] === undefined);
  if (unknown.length) throw forbidden(`${who} is forbidden: status unknown for quota: ${quotaName}, resources: ${unknown.sort().join(',')}`);
  if (r.def.group === '' && r.def.plural === 'pods' && r.operation === 'CREATE') {
    const problem = podConstraintProblem(r.object!, names);
    if (problem) throw forbidden(`${who} is forbidden: failed quota: ${quotaName}: ${problem}`);
  }
  const next = addLists(used, delta);
  const over = exceededNames(maskList(next, names), maskList(hard, names)).filter((n) => delta[n] !== undefined && !isZeroList({ [n]: delta[n]! }));
  if (over.length) {
    throw forbidden(`${who} is forbidden: exceeded quota: ${quotaName}, requested: ${printList(delta, over)}, used: ${printList(used, over)}, limited: ${printList(hard, over)}`);
  }
  return next;
}

/** The quotas `r` is charged to (names), after checking each; throws the first refusal. */
function chargesOf(ctx: ServerContext, r: AdmissionRequest, quotas: readonly ApiObject[]): string[] {
  const charges: string[] = [];
  for (const q of quotas as unknown as ResourceQuota[]) {
    const { names, delta } = requestedOf(ctx, r, q);
    if (!names.length || isZeroList(delta)) continue;
    checked(r, q, names, delta);
    charges.push(q.metadata.name!);
  }
  return charges;
}

/** An in-place resize changes what a pod requests, so it is charged like an update (as upstream). */
const isPodResize = (r: AdmissionRequest): boolean => r.subresource === 'resize' && r.def.group === '' && r.def.plural === 'pods';

export const resourceQuotaAdmission: AdmissionPlugin = async (ctx, r) => {
  if ((r.subresource && !isPodResize(r)) || !r.object || !r.namespace || (r.operation !== 'CREATE' && r.operation !== 'UPDATE')) return;
  const quotas = ctx.resource('', 'v1', 'resourcequotas');
  if (!quotas) return;
  // Check every quota before charging any, so a refusal charges nothing. The check reads the
  // quotas from memory (every create in the namespace does): a mirror that lags lets a create
  // through to the charge, which re-checks on the stored quota; a refusal is decided on the store.
  let charges: string[];
  try {
    charges = chargesOf(ctx, r, await listMirrored(ctx, quotas, r.namespace, r.signal));
  } catch (err) {
    if (!ctx.mirrorOf?.(quotas.def)) throw err;
    charges = chargesOf(ctx, r, (await quotas.registry.list({ namespace: r.namespace, filter: MATCH_ALL, signal: r.signal })).items);
  }
  if (r.dryRun) return;
  for (const name of charges) {
    try {
      await quotas.registry.guaranteedUpdate(
        r.namespace,
        name,
        (current: ApiObject) => {
          // The quota as stored now: another admission may have charged it since the check.
          const q = current as unknown as ResourceQuota;
          const { names, delta } = requestedOf(ctx, r, q);
          if (!names.length || isZeroList(delta)) return undefined;
          const used = checked(r, q, names, delta);
          q.status = { ...q.status, used: { ...listOf(q.status?.used), ...maskList(used, names) } };
          return current;
        },
        { signal: r.signal },
      );
    } catch (err) {
      // Deleted since the check (the mirror may not have seen it yet): nothing to charge.
      if (!(err instanceof StatusError && err.reason === 'NotFound')) throw err;
    }
  }
};
