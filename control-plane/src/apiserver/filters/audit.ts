/**
 * Audit logging in the chain (control-plane/src/apiserver/audit/, docs/security.md "Audit
 * logging"), in two parts around authentication as kube-apiserver's WithAudit and its
 * failed-authentication audit:
 *
 *   … public paths ─▶ audit begin ─▶ authentication ─▶ audit ─▶ impersonation ─▶ …
 *
 * - `auditBeginFilter` opens the request's audit handle before authentication: the `Audit-ID`
 *   header goes on every reply, and a 401 is audited (once, with no user). Bodies reach the
 *   handle through audit/hooks.ts; the reply's close completes the event. An error that escapes
 *   the rest of the chain is recorded (a Panic for what is not a Status; an upgrade's failure
 *   status) before the recovery filter writes it.
 * - `auditFilter` gives the handle the authenticated caller, which decides the policy's level and
 *   emits RequestReceived. The impersonation filter adds the impersonated user.
 *
 * Without an auditor (no `--audit-policy-file`) both pass the request on.
 */
import { toStatusError } from '../status.js';
import type { Auditor } from '../audit/index.js';
import type { Filter } from './chain.js';

export function auditBeginFilter(auditor: Auditor | undefined): Filter {
  if (!auditor) return (_r, next) => next();
  return async (r, next) => {
    const handle = auditor.begin(r.req, r.upgrade ? undefined : r.res, r.url!);
    r.audit = handle;
    try {
      await next();
    } catch (err) {
      handle.failed(err);
      if (r.upgrade) handle.upgradeFailed(toStatusError(err));
      throw err;
    }
    // An upgrade handed to the agent: 101 now, ResponseComplete when its connection closes.
    if (r.upgrade) handle.upgraded(r.upgrade.socket);
  };
}

export function auditFilter(): Filter {
  return async (r, next) => {
    r.audit?.authenticated(r.authenticated!);
    await next();
  };
}
