/**
 * Impersonation (kube-apiserver's WithImpersonation): with `Impersonate-*` headers the caller
 * is authorized for each part it asks to become (403 otherwise), and the request runs as that
 * user from here on (auth/impersonation.ts).
 */
import { impersonatedUser } from '../auth/impersonation.js';
import type { Authorizer } from '../auth/types.js';
import type { Filter } from './chain.js';

export function impersonationFilter(authorizer: Authorizer): Filter {
  return async (r, next) => {
    r.user = await impersonatedUser(r.req, r.authenticated!, authorizer);
    await next();
  };
}
