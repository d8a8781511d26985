/**
 * Writes the bootstrap policy at server start, as kube-apiserver's RBAC post-start hook does:
 * missing roles and bindings are created; existing ones that keep
 * `rbac.authorization.kubernetes.io/autoupdate: "true"` get the rules (or subjects) they lack
 * added back — nothing an admin added is removed, and an admin who sets autoupdate to "false"
 * owns that object from then on. Also creates the kube-system service accounts the controllers
 * act as. Idempotent; runs on every start.
 */
import type { ClusterRoleBinding, PolicyRule, RoleBinding, Subject } from '@nodelet/api';
import type { Logger } from '@nodelet/base';
import type { ServedResource, ServerContext } from '../../context.js';
import { admitCreate, admitUpdate } from '../../handlers/admit.js';
import { jsonEqual, type ApiObject } from '../../object.js';
import { StatusError } from '../../status.js';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles, bootstrapRoleBindings, bootstrapRoles } from './bootstrap-roles.js';
import { CONTROLLER_ACCOUNTS, controllerClusterRoleBindings, controllerClusterRoles } from './controller-roles.js';
import { AUTOUPDATE_ANNOTATION } from './policy-builders.js';
import { uncoveredRules } from './policy-rule.js';

type Merge = (existing: ApiObject, wanted: ApiObject) => ApiObject | undefined;

/** Adds the wanted rules the existing role does not cover; merges aggregation selectors. */
const mergeRole: Merge = (existing, wanted) => {
  const have = ((existing.rules as PolicyRule[] | null | undefined) ?? []) as PolicyRule[];
  const want = ((wanted.rules as PolicyRule[] | null | undefined) ?? []) as PolicyRule[];
  const missing = want.filter((r) => uncoveredRules(have, [r]).length > 0);
  const wantAgg = (wanted.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined)?.clusterRoleSelectors ?? [];
  const haveAgg = (existing.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined)?.clusterRoleSelectors ?? [];
  const missingAgg = wantAgg.filter((w) => !haveAgg.some((h) => jsonEqual(h, w)));
  const labels = { ...(existing.metadata.labels ?? {}), ...(wanted.metadata.labels ?? {}) };
  if (!missing.length && !missingAgg.length && jsonEqual(labels, existing.metadata.labels ?? {})) return undefined;
  const next = structuredClone(existing);
  next.metadata.labels = labels;
  // Aggregated roles' rules belong to the aggregation controller: only their selectors are ours.
  if (!wanted.aggregationRule) next.rules = [...have, ...missing];
  if (wantAgg.length) next.aggregationRule = { clusterRoleSelectors: [...haveAgg, ...missingAgg] };
  return next;
};

/** Adds the wanted subjects the existing binding lacks. */
const mergeBinding: Merge = (existing, wanted) => {
  const have = ((existing.subjects as Subject[] | undefined) ?? []) as Subject[];
  const missing = (((wanted.subjects as Subject[] | undefined) ?? []) as Subject[]).filter((w) => !have.some((h) => jsonEqual(h, w)));
  if (!missing.length) return undefined;
  return { ...structuredClone(existing), subjects: [...have, ...missing] };
};

async function ensure(ctx: ServerContext, served: ServedResource, wanted: ApiObject, merge: Merge, log: Logger): Promise<void> {
  const ns = wanted.metadata.namespace;
  const name = wanted.metadata.name!;
  const existing = await served.registry.find(ns, name);
  if (!existing) {
    try {
      await served.registry.create(admitCreate(ctx, served.def, structuredClone(wanted)));
      log.debug({ kind: served.def.kind, name }, 'Created bootstrap RBAC object');
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
    return;
  }
  if (existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return;
  if (served.def.kind.endsWith('Binding') && !jsonEqual((existing as unknown as RoleBinding).roleRef, (wanted as unknown as ClusterRoleBinding).roleRef)) {
    // roleRef is immutable: a binding pointing elsewhere is replaced, as upstream's reconcile does.
    await served.registry.remove(existing);
    await served.registry.create(admitCreate(ctx, served.def, structuredClone(wanted)));
    log.info({ kind: served.def.kind, name }, 'Replaced bootstrap binding with a changed roleRef');
    return;
  }
  await served.registry.guaranteedUpdate(ns, name, (current) => {
    const next = merge(current, wanted);
    return next ? admitUpdate(served.def, next, current) : undefined;
  });
}

export async function reconcileBootstrapPolicy(ctx: ServerContext, log: Logger): Promise<void> {
  const res = (plural: string): ServedResource => ctx.resource('rbac.authorization.k8s.io', 'v1', plural)!;
  for (const r of [...bootstrapClusterRoles(), ...controllerClusterRoles()]) await ensure(ctx, res('clusterroles'), r as unknown as ApiObject, mergeRole, log);
  for (const b of [...bootstrapClusterRoleBindings(), ...controllerClusterRoleBindings()]) await ensure(ctx, res('clusterrolebindings'), b as unknown as ApiObject, mergeBinding, log);
  for (const r of bootstrapRoles()) await ensure(ctx, res('roles'), r as unknown as ApiObject, mergeRole, log);
  for (const b of bootstrapRoleBindings()) await ensure(ctx, res('rolebindings'), b as unknown as ApiObject, mergeBinding, log);
  const sas = ctx.resource('', 'v1', 'serviceaccounts')!;
  for (const name of CONTROLLER_ACCOUNTS) {
    await ensure(ctx, sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'kube-system' } }, () => undefined, log);
  }
}
