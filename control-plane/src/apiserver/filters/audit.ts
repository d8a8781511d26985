/**
 * The audit filter's place in the chain: after authentication (the request's real author is
 * known) and before impersonation (so an impersonated request is recorded with both users), as
 * kube-apiserver's WithAudit. Today it only passes the request on.
 *
 * Wiring audit logging in (control-plane/src/apiserver/audit/): record the request-received
 * stage from `r.authenticated`, `r.req` and `r.url` before `next()`, and the response-complete
 * (or panic) stage in a `finally` after it, with `r.user` (the impersonated user, if any) and
 * `r.res.statusCode`. The request's `r.signal` tells a timed-out request from a completed one.
 */
import type { Filter } from './chain.js';

export function auditFilter(): Filter {
  return (_r, next) => next();
}
