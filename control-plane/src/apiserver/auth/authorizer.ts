/**
 * The authorizer chain, in kube-apiserver's order for `--authorization-mode=Node,RBAC`:
 *
 *   system:masters ─allow─▶ (the privileged-group authorizer: always allowed)
 *   Node           ─allow/no opinion (+why)─▶ (node-authorizer.ts, nodes only)
 *   RBAC           ─allow/no opinion─▶      (rbac/rbac-authorizer.ts)
 *   otherwise      deny, with the reason of the first link that explained itself (or none)
 *
 * A denial's `reason` is the bare explanation (what SubjectAccessReview status carries); the
 * 403 message names the user and the request the way kube-apiserver words it, because kubectl
 * prints it verbatim: `pods is forbidden: User "alice" cannot list resource "pods" in API group
 * "" in the namespace "default"` ({@link forbiddenMessage}).
 */
import type { AuthorizerLink, Authorizer, RequestAttributes, UserInfo } from './types.js';
import { ADMIN_GROUP } from './types.js';

export const isAdmin = (user: UserInfo): boolean => user.groups.includes(ADMIN_GROUP);

const privilegedGroup: AuthorizerLink = (user) => (isAdmin(user) ? { allowed: true, reason: `allowed by group "${ADMIN_GROUP}"` } : undefined);

export function createAuthorizerChain(links: readonly AuthorizerLink[]): Authorizer {
  const chain = [privilegedGroup, ...links];
  return {
    async authorize(user, a) {
      let why: string | undefined;
      for (const link of chain) {
        const d = await link(user, a);
        if (!d) continue;
        if (d.allowed) return d;
        // A link that does not allow explains why (the Node authorizer's "no relationship");
        // later links may still allow, as upstream's union authorizer.
        why ??= d.reason;
      }
      return { allowed: false, reason: why ?? '' };
    },
  };
}

/** `cannot get resource "pods/log" in API group "" in the namespace "default"` — upstream's wording. */
export function describeRequest(a: RequestAttributes): string {
  if (a.path !== undefined) return `cannot ${a.verb} path "${a.path}"`;
  const res = `${a.resource ?? ''}${a.subresource ? '/' + a.subresource : ''}`;
  return `cannot ${a.verb} resource "${res}" in API group "${a.group ?? ''}"${a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope'}`;
}

/** The Forbidden message of a denied request: `pods "web" is forbidden: User "alice" cannot …[: why]`. */
export function forbiddenMessage(user: UserInfo, a: RequestAttributes, why?: string): string {
  const detail = `User "${user.name}" ${describeRequest(a)}${why ? `: ${why}` : ''}`;
  if (a.path !== undefined) return `forbidden: ${detail}`;
  const what = `${a.resource ?? ''}${a.group ? '.' + a.group : ''}`;
  return `${what}${a.name ? ` "${a.name}"` : ''} is forbidden: ${detail}`;
}
