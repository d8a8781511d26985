/**
 * Pod Security levels, policy versions and the namespace labels that choose them (upstream
 * k8s.io/pod-security-admission/api): `pod-security.kubernetes.io/<mode>` names a level,
 * `…/<mode>-version` a version (`latest` or `v1.<minor>`), for each mode enforce, audit, warn.
 */
import { SERVER_VERSION } from '../../discovery.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
/** A policy version: `latest`, or the minor of `v1.<minor>`. */
export type PolicyVersion = 'latest' | number;

export interface LevelVersion {
  level: Level;
  version: PolicyVersion;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export type Mode = keyof Policy;
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
/** Audit annotation keys are the label prefix plus upstream's names (enforce-policy, audit-violations, exempt, error). */
export const AUDIT_ANNOTATION_PREFIX = LABEL_PREFIX;
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/**
 * The newest policy this server knows: the minor it reports at /version (`latest` and any newer
 * `v1.x` evaluate as this one, as upstream clamps to its own version).
 */
export const LATEST_MINOR = Number(SERVER_VERSION.minor);

export const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: 'latest' };
export const DEFAULT_POLICY: Policy = { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST };

export function formatVersion(v: PolicyVersion): string {
  return v === 'latest' ? 'latest' : `v1.${v}`;
}

/** `restricted:latest`, `baseline:v1.29`: how upstream names a policy in messages. */
export function formatLevelVersion(lv: LevelVersion): string {
  return `${lv.level}:${formatVersion(lv.version)}`;
}

export function isLevel(v: string): v is Level {
  return (LEVELS as readonly string[]).includes(v);
}

export const LEVEL_ERROR = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

/** `latest` or `v1.<n>` (no leading zeros); undefined otherwise. */
export function parseVersion(v: string): PolicyVersion | undefined {
  if (v === 'latest') return 'latest';
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** -1, 0 or 1 as `a` is less, as or more strict than `b`. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version === b.version;
}

/** Both privileged, or the same level and version (upstream LevelVersion.Equivalent). */
export function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
}

export function fullyPrivileged(p: Policy): boolean {
  return MODES.every((m) => p[m].level === 'privileged');
}

export interface LabelError {
  label: string;
  value: string;
  message: string;
}

/**
 * The policy a namespace's labels choose over `defaults`, and the labels that could not be read
 * (upstream PolicyToEvaluate): a bad enforce level reads as `restricted` (fail closed), a bad
 * audit or warn level as `privileged` (fail open), a bad version as `latest`. When enforce is
 * labelled stricter than warn and warn is not labelled, warn follows enforce.
 */
export function policyFromLabels(labels: Record<string, string> | undefined, defaults: Policy): { policy: Policy; errors: LabelError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: LabelError[] = [];
  if (!labels) return { policy, errors };
  let enforceLevelSet = false;
  for (const mode of MODES) {
    const levelLabel = LABEL_PREFIX + mode;
    const level = labels[levelLabel];
    if (level !== undefined) {
      if (isLevel(level)) {
        policy[mode].level = level;
        if (mode === 'enforce') enforceLevelSet = true;
      } else {
        policy[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
        errors.push({ label: levelLabel, value: level, message: LEVEL_ERROR });
      }
    }
    const versionLabel = `${levelLabel}-version`;
    const version = labels[versionLabel];
    if (version !== undefined) {
      const parsed = parseVersion(version);
      policy[mode].version = parsed ?? 'latest';
      if (parsed === undefined) errors.push({ label: versionLabel, value: version, message: VERSION_ERROR });
    }
  }
  const warnLevelSet = labels[`${LABEL_PREFIX}warn`] !== undefined;
  const warnVersionSet = labels[`${LABEL_PREFIX}warn-version`] !== undefined;
  if (!warnLevelSet && enforceLevelSet && compareLevels(policy.enforce.level, policy.warn.level) > 0) {
    policy.warn.level = policy.enforce.level;
    if (!warnVersionSet) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}
