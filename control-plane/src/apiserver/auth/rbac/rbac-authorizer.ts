/**
 * The RBAC authorizer (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac): a request is allowed
 * when a rule of a role bound to the user allows it —
 *
 *   ClusterRoleBindings ─▶ ClusterRole rules              (everywhere)
 *   RoleBindings in ns  ─▶ Role (same ns) / ClusterRole   (only in that namespace)
 *
 * Roles and bindings are read from in-memory mirrors (mirror.ts), never from the store, so a
 * decision costs map lookups. RBAC only grants: no match means "no opinion", and the chain
 * (authorizer.ts) turns that into a 403.
 */
import type { ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject } from '@nodelet/api';
import type { ResourceMirror } from '../../mirror.js';
import type { ApiObject } from '../../object.js';
import type { Decision, RequestAttributes, UserInfo } from '../types.js';
import { SERVICEACCOUNT_USER_PREFIX } from '../types.js';
import { ruleAllows } from './policy-rule.js';

export interface RbacMirrors {
  roles: ResourceMirror;
  clusterRoles: ResourceMirror;
  roleBindings: ResourceMirror;
  clusterRoleBindings: ResourceMirror;
}

/** Does a binding subject name this user (upstream appliesToUser)? */
export function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      // A RoleBinding may leave the namespace of its service-account subjects implicit.
      const ns = s.namespace || bindingNamespace;
      return !!ns && user.name === `${SERVICEACCOUNT_USER_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

type Binding = (RoleBinding | ClusterRoleBinding) & ApiObject;

/** Where a rule came from, for the reason of an allowed decision. */
interface RuleSource {
  binding: Binding;
  rules: readonly PolicyRule[];
}

export class RbacAuthorizer {
  readonly #m: RbacMirrors;

  constructor(mirrors: RbacMirrors) {
    this.#m = mirrors;
  }

  authorize(user: UserInfo, a: RequestAttributes): Decision | undefined {
    for (const src of this.#sources(user, a.path === undefined ? a.namespace : undefined)) {
      if (src.rules.some((r) => ruleAllows(r, a))) return { allowed: true, reason: `RBAC: allowed by ${describeBinding(src.binding)} to ${describeUser(user)}` };
    }
    return undefined;
  }

  /** Every rule that applies to `user` in `namespace` (cluster-wide rules included), as SelfSubjectRulesReview lists them. */
  rulesFor(user: UserInfo, namespace: string | undefined): { rules: PolicyRule[]; missingRoles: string[] } {
    const rules: PolicyRule[] = [];
    const missingRoles: string[] = [];
    for (const src of this.#sources(user, namespace, missingRoles)) rules.push(...src.rules);
    return { rules, missingRoles };
  }

  /** The rules of the role a binding refers to (undefined when that role does not exist). */
  rulesOfRoleRef(ref: RoleRef, namespace: string | undefined): PolicyRule[] | undefined {
    const role = ref.kind === 'ClusterRole' ? this.#m.clusterRoles.get(undefined, ref.name) : namespace ? this.#m.roles.get(namespace, ref.name) : undefined;
    return role ? (((role.rules as PolicyRule[] | null | undefined) ?? []) as PolicyRule[]) : undefined;
  }

  *#sources(user: UserInfo, namespace: string | undefined, missing?: string[]): Generator<RuleSource> {
    for (const b of this.#m.clusterRoleBindings.all() as Iterable<Binding>) {
      if (!(b.subjects ?? []).some((s) => subjectMatches(s, user, undefined))) continue;
      const rules = this.rulesOfRoleRef(b.roleRef, undefined);
      if (rules) yield { binding: b, rules };
      else missing?.push(`clusterrole "${b.roleRef?.name}"`);
    }
    if (!namespace) return;
    for (const b of this.#m.roleBindings.inNamespace(namespace) as Iterable<Binding>) {
      if (!(b.subjects ?? []).some((s) => subjectMatches(s, user, namespace))) continue;
      const rules = this.rulesOfRoleRef(b.roleRef, namespace);
      if (rules) yield { binding: b, rules };
      else missing?.push(`${b.roleRef?.kind === 'Role' ? 'role' : 'clusterrole'} "${b.roleRef?.name}"`);
    }
  }
}

function describeBinding(b: Binding): string {
  const ns = b.metadata.namespace;
  const kind = ns ? 'RoleBinding' : 'ClusterRoleBinding';
  return `${kind} "${ns ? `${b.metadata.name}/${ns}` : b.metadata.name}" of ${b.roleRef?.kind} "${b.roleRef?.name}"`;
}

function describeUser(u: UserInfo): string {
  return u.name.startsWith(SERVICEACCOUNT_USER_PREFIX) ? `ServiceAccount "${u.name.slice(SERVICEACCOUNT_USER_PREFIX.length).replace(':', '/')}"` : `User "${u.name}"`;
}
