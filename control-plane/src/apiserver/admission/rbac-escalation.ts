/**
 * RBAC escalation prevention (upstream pkg/registry/rbac/*\/policybased): nobody grants what
 * they do not hold.
 *
 *   Role / ClusterRole create|update   allowed for system:masters, for holders of `escalate` on
 *                                      roles|clusterroles, or when every rule is covered by the
 *                                      caller's own rules (in the role's namespace / cluster-wide);
 *                                      an aggregationRule needs full (cluster-admin) authority
 *   RoleBinding / ClusterRoleBinding   allowed for system:masters, for holders of `bind` on the
 *                                      referenced role, or when the caller holds every rule of it
 */
import type { ClusterRole, PolicyRule, RoleRef } from '@nodelet/api';
import { isAdmin } from '../auth/authorizer.js';
import { formatRule, uncoveredRules } from '../auth/rbac/policy-rule.js';
import type { UserInfo } from '../auth/types.js';
import { forbidden } from '../status.js';
import type { AdmissionPlugin } from './types.js';

const RBAC = 'rbac.authorization.k8s.io';
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const describe = (u: UserInfo): string => `user "${u.name}" (groups=[${u.groups.map((g) => JSON.stringify(g)).join(' ')}])`;

export const rbacEscalation: AdmissionPlugin = async (ctx, r) => {
  if (r.def.group !== RBAC || r.operation === 'DELETE' || !r.object || isAdmin(r.user)) return;
  const plural = r.def.plural;
  const name = r.name ?? r.object.metadata.name ?? '';
  const ns = r.def.namespaced ? r.namespace : undefined;
  const refuse = (why: string): never => {
    throw forbidden(`${plural}.${RBAC} "${name}" is forbidden: ${why}`);
  };

  if (plural === 'roles' || plural === 'clusterroles') {
    const rules = ((r.object.rules as PolicyRule[] | null | undefined) ?? []) as PolicyRule[];
    if (r.oldObject && JSON.stringify(r.oldObject.rules ?? []) === JSON.stringify(rules) && JSON.stringify(r.oldObject.aggregationRule) === JSON.stringify(r.object.aggregationRule)) return;
    const escalate = await ctx.authorizer.authorize(r.user, { verb: 'escalate', group: RBAC, resource: plural, namespace: ns, name });
    if (escalate.allowed) return;
    const held = ctx.rbac.rulesFor(r.user, ns).rules;
    if ((r.object as ClusterRole).aggregationRule && uncoveredRules(held, FULL_AUTHORITY).length) {
      refuse(`must have cluster-admin privileges to use the aggregationRule`);
    }
    const missing = uncoveredRules(held, rules);
    if (missing.length) refuse(`${describe(r.user)} is attempting to grant RBAC permissions not currently held:\n${missing.map(formatRule).join('\n')}`);
    return;
  }

  if (plural === 'rolebindings' || plural === 'clusterrolebindings') {
    const ref = r.object.roleRef as RoleRef | undefined;
    if (!ref) return; // validation reports it
    const bind = await ctx.authorizer.authorize(r.user, { verb: 'bind', group: RBAC, resource: ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles', namespace: ns, name: ref.name });
    if (bind.allowed) return;
    const rules = ctx.rbac.rulesOfRoleRef(ref, ns);
    if (!rules) refuse(`${ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles'}.${RBAC} "${ref.name}" not found`);
    const missing = uncoveredRules(ctx.rbac.rulesFor(r.user, ns).rules, rules!);
    if (missing.length) refuse(`${describe(r.user)} is attempting to grant RBAC permissions not currently held:\n${missing.map(formatRule).join('\n')}`);
  }
};
