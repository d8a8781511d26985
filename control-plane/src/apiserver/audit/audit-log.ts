/**
 * The `--audit-*` flags of `nodelet server` (kube-apiserver's names and defaults) turned into a
 * policy and a writer. Everything that can be wrong is found here, before the server starts.
 */
import { readFileSync } from 'node:fs';
import { parseAuditPolicy, type AuditPolicy } from './policy.js';
import { RotatingFile, type RotationOptions } from './rotating-file.js';
import type { LineWriter } from './auditor.js';

/** What the server needs to audit: the policy and where the lines go. */
export interface AuditLogConfig {
  policy: AuditPolicy;
  /** A file, or `-` for standard output. */
  path: string;
  rotation: Omit<RotationOptions, 'now'>;
}

/** The raw flag values (strings as parsed; undefined when not given). */
export interface AuditFlags {
  'audit-policy-file'?: string;
  'audit-log-path'?: string;
  'audit-log-maxsize'?: string;
  'audit-log-maxage'?: string;
  'audit-log-maxbackup'?: string;
}

/**
 * Validates the flags and reads the policy. Returns undefined when auditing is off (neither flag),
 * or throws an Error whose message names the flag. The policy and the path need each other:
 * kube-apiserver starts with one alone and logs nothing, which would be a flag that does nothing.
 */
export function auditLogConfigFromFlags(f: AuditFlags): AuditLogConfig | undefined {
  const policyFile = f['audit-policy-file'];
  const path = f['audit-log-path'];
  const rotationGiven = (['audit-log-maxsize', 'audit-log-maxage', 'audit-log-maxbackup'] as const).filter((k) => f[k] !== undefined);
  if (!policyFile && !path) {
    if (rotationGiven.length > 0) throw new Error(`--${rotationGiven[0]} needs --audit-log-path and --audit-policy-file`);
    return undefined;
  }
  if (!policyFile) throw new Error('--audit-log-path needs --audit-policy-file: without a policy no event is logged');
  if (!path) throw new Error('--audit-policy-file needs --audit-log-path (a file, or - for standard output)');
  if (path === '-' && rotationGiven.length > 0) throw new Error(`--${rotationGiven[0]} applies to an audit log file, not to standard output (--audit-log-path -)`);
  const count = (k: 'audit-log-maxsize' | 'audit-log-maxage' | 'audit-log-maxbackup'): number => {
    const v = f[k] ?? '0';
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new Error(`--${k} must be a non-negative integer, got "${v}"`);
    return Number(v);
  };
  const rotation = { maxSizeMB: count('audit-log-maxsize'), maxAgeDays: count('audit-log-maxage'), maxBackups: count('audit-log-maxbackup') };
  let text: string;
  try {
    text = readFileSync(policyFile, 'utf8');
  } catch (err) {
    throw new Error(`--audit-policy-file: cannot read "${policyFile}": ${(err as Error).message}`, { cause: err });
  }
  try {
    return { policy: parseAuditPolicy(text), path, rotation };
  } catch (err) {
    throw new Error(`--audit-policy-file "${policyFile}": ${(err as Error).message}`, { cause: err });
  }
}

/** Opens the audit log: the rotating file (created 0600, throws when it cannot be), or stdout. */
export function openAuditLog(c: AuditLogConfig): LineWriter {
  if (c.path === '-') return { write: (text) => void process.stdout.write(text), close: () => undefined };
  return new RotatingFile(c.path, c.rotation);
}
