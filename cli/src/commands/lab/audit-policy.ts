/**
 * The lab server's audit log: Metadata for every request (who, what, which object, the answer;
 * never a body) except heartbeats and health checks, written by `nodelet lab up` to
 * `<state-dir>/audit-policy.yaml` when absent so that an edit there survives restarts.
 * docs/security.md "Audit logging".
 */
import { existsSync, writeFileSync } from 'node:fs';

export const LAB_AUDIT_POLICY = `# nodelet lab's audit policy (audit.k8s.io/v1; docs/security.md "Audit logging").
# The first rule that matches a request decides its level; edit and restart the server to change it.
apiVersion: audit.k8s.io/v1
kind: Policy
# One line per request (its end), not two.
omitStages: [RequestReceived]
rules:
  # Node and leader-election lease renewals: every few seconds each, nothing to audit.
  - level: None
    verbs: [get, update, patch]
    resources:
      - group: coordination.k8s.io
        resources: [leases]
  # The agents' reads of their own pods, secrets and config.
  - level: None
    userGroups: ["system:nodes"]
    verbs: [get, list, watch]
  - level: None
    nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version"]
  # Everything else: who did what to which object, and the answer.
  - level: Metadata
`;

/** Rotation of the lab's audit log: 100 MB files, the current one and five rotated. */
const LAB_AUDIT_ROTATION = ['--audit-log-maxsize', '100', '--audit-log-maxbackup', '5'];

/**
 * The `nodelet server` flags of the lab's audit log, writing the default policy when the file is
 * absent. None when the caller's own server flags already configure auditing.
 */
export function labAuditArgs(paths: { auditPolicy: string; auditLog: string }, serverArgs: readonly string[]): string[] {
  if (serverArgs.some((a) => a.startsWith('--audit-'))) return [];
  if (!existsSync(paths.auditPolicy)) writeFileSync(paths.auditPolicy, LAB_AUDIT_POLICY, { mode: 0o644 });
  return ['--audit-policy-file', paths.auditPolicy, '--audit-log-path', paths.auditLog, ...LAB_AUDIT_ROTATION];
}
