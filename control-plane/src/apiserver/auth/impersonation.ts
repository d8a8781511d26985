/**
 * User impersonation (`kubectl --as alice --as-group devs`, upstream
 * k8s.io/apiserver/pkg/endpoints/filters/impersonation.go). The caller is authorized for every
 * part it asks to become, with the `impersonate` verb:
 *
 *   Impersonate-User: alice                 users "alice"            (core group)
 *   Impersonate-User: system:serviceaccount:ns:sa   serviceaccounts "sa" in namespace ns
 *   Impersonate-Group: devs (repeatable)    groups "devs"
 *   Impersonate-Uid: 1234                   uids "1234"              (authentication.k8s.io)
 *   Impersonate-Extra-<key>: v (repeatable) userextras/<key> "v"     (authentication.k8s.io)
 *
 * The request then runs as that user; every impersonated user is in system:authenticated, and a
 * service account without explicit groups gets its service-account groups.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, forbidden } from '../status.js';
import { forbiddenMessage } from './authorizer.js';
import type { Authorizer, RequestAttributes, UserInfo } from './types.js';
import { AUTHENTICATED_GROUP, serviceAccountGroups, serviceAccountOf } from './types.js';

const EXTRA_PREFIX = 'impersonate-extra-';

function values(req: IncomingMessage, name: string): string[] {
  return (req.headersDistinct[name] ?? []).filter((v) => v !== '');
}

/** True when the request carries any impersonation header. */
export function wantsImpersonation(req: IncomingMessage): boolean {
  return Object.keys(req.headers).some((h) => h.startsWith('impersonate-'));
}

/** The user the request acts as: the caller, or whom it impersonates (after authorizing each part). */
export async function impersonatedUser(req: IncomingMessage, caller: UserInfo, authorizer: Authorizer): Promise<UserInfo> {
  if (!wantsImpersonation(req)) return caller;
  const userName = values(req, 'impersonate-user')[0];
  const groups = values(req, 'impersonate-group');
  const uid = values(req, 'impersonate-uid')[0];
  const extra: Record<string, string[]> = {};
  for (const h of Object.keys(req.headers)) {
    if (!h.startsWith(EXTRA_PREFIX)) continue;
    let key: string;
    try {
      key = decodeURIComponent(h.slice(EXTRA_PREFIX.length)).toLowerCase();
    } catch {
      throw badRequest(`invalid impersonation extra header "${h}"`);
    }
    extra[key] = values(req, h);
  }
  if (!userName) throw badRequest('requested impersonation of groups, uid or extras without impersonating a user');

  const checks: RequestAttributes[] = [];
  const sa = serviceAccountOf(userName);
  checks.push(sa ? { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name } : { verb: 'impersonate', group: '', resource: 'users', name: userName });
  for (const g of groups) checks.push({ verb: 'impersonate', group: '', resource: 'groups', name: g });
  if (uid) checks.push({ verb: 'impersonate', group: 'authentication.k8s.io', resource: 'uids', name: uid });
  for (const [k, vs] of Object.entries(extra)) for (const v of vs) checks.push({ verb: 'impersonate', group: 'authentication.k8s.io', resource: 'userextras', subresource: k, name: v });
  for (const a of checks) {
    const d = await authorizer.authorize(caller, a);
    if (!d.allowed) throw forbidden(forbiddenMessage(caller, a, d.reason || undefined));
  }

  const all = sa && groups.length === 0 ? serviceAccountGroups(sa.namespace) : [...groups];
  if (!all.includes(AUTHENTICATED_GROUP)) all.push(AUTHENTICATED_GROUP);
  return { name: userName, groups: all, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
