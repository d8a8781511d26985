/** Authentication and authorization shapes (k8s.io/apiserver user.Info and authorizer.Attributes). */
export interface UserInfo {
  name: string;
  /** Set for service accounts and for impersonated users that name one. */
  uid?: string;
  groups: readonly string[];
  /** Authenticator-provided extras (`Impersonate-Extra-*`, token claims); keys lower-case. */
  extra?: Readonly<Record<string, readonly string[]>>;
}

export const ADMIN_GROUP = 'system:masters';
export const NODES_GROUP = 'system:nodes';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const SERVICEACCOUNTS_GROUP = 'system:serviceaccounts';
export const NODE_USER_PREFIX = 'system:node:';
export const SERVICEACCOUNT_USER_PREFIX = 'system:serviceaccount:';

export interface RequestAttributes {
  verb: string;
  /** Resource requests. */
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Non-resource requests (/version, /api, /healthz …). */
  path?: string;
}

export interface Authenticator {
  /** The user of a bearer token, or undefined (→ 401). */
  authenticate(token: string): Promise<UserInfo | undefined>;
}

/** An authorizer's answer. `reason` says why (allowed: which binding; denied: what was missing). */
export type Decision = { allowed: true; reason?: string } | { allowed: false; reason: string };

/** One link of the authorizer chain; `undefined` = no opinion, ask the next one. */
export type AuthorizerLink = (user: UserInfo, a: RequestAttributes) => Promise<Decision | undefined> | Decision | undefined;

export interface Authorizer {
  authorize(user: UserInfo, a: RequestAttributes): Promise<Decision>;
}

/** `system:serviceaccount:<ns>:<name>` → its namespace and name. */
export function serviceAccountOf(userName: string): { namespace: string; name: string } | undefined {
  if (!userName.startsWith(SERVICEACCOUNT_USER_PREFIX)) return undefined;
  const rest = userName.slice(SERVICEACCOUNT_USER_PREFIX.length).split(':');
  if (rest.length !== 2 || !rest[0] || !rest[1]) return undefined;
  return { namespace: rest[0], name: rest[1] };
}

/** The groups every service account is in (upstream serviceaccount.MakeGroupNames + authenticated). */
export function serviceAccountGroups(namespace: string): string[] {
  return [SERVICEACCOUNTS_GROUP, `${SERVICEACCOUNTS_GROUP}:${namespace}`, AUTHENTICATED_GROUP];
}

/** The user of a service account (what its tokens authenticate as). */
export function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  return { name: `${SERVICEACCOUNT_USER_PREFIX}${namespace}:${name}`, ...(uid ? { uid } : {}), groups: serviceAccountGroups(namespace) };
}
