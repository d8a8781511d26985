/** Authentication and authorization shapes (k8s.io/apiserver user.Info and authorizer.Attributes). */
export interface UserInfo {
  name: string;
  groups: readonly string[];
}

export const ADMIN_GROUP = 'system:masters';
export const NODES_GROUP = 'system:nodes';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const NODE_USER_PREFIX = 'system:node:';

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
