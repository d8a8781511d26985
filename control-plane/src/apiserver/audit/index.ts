/**
 * Audit logging (docs/security.md "Audit logging"): the server's one entry point. The request
 * edge calls `auditor.begin` per request and the handle's methods at authentication,
 * impersonation, failure and upgrade; bodies arrive through hooks.ts.
 */
import type { Logger } from '@nodelet/base';
import type { ServerContext } from '../context.js';
import { isLongRunning } from '../limits.js';
import { openAuditLog, type AuditLogConfig } from './audit-log.js';
import { Auditor } from './auditor.js';
import { auditRequestInfo } from './request-info.js';

export { Auditor, AuditHandle, isSensitive, SENSITIVE, type LineWriter } from './auditor.js';
export { auditLogConfigFromFlags, openAuditLog, type AuditFlags, type AuditLogConfig } from './audit-log.js';
export { parseAuditPolicy, evaluatePolicy, type AuditPolicy, type AuditLevel, type AuditStage } from './policy.js';
export type { AuditEvent } from './event.js';
export { auditAuthorization } from './hooks.js';

/** The server's auditor for `config`: opens the log now, so a path that cannot be written fails the start. */
export function createAuditor(config: AuditLogConfig, ctx: ServerContext, logger: Logger): Auditor {
  return new Auditor({
    policy: config.policy,
    writer: openAuditLog(config),
    describe: (method, url) => auditRequestInfo(ctx, method, url),
    longRunning: isLongRunning,
    logger: logger.child({ component: 'audit' }),
  });
}
