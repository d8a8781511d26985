/**
 * Runs the checks of a level at a version (upstream policy.checkRegistry): for each check the
 * newest variant whose minimum version is at most the one asked for; restricted runs its own
 * checks and the baseline ones none of them replaces; baseline checks come first, each level's
 * in order of check ID, so messages list violations in upstream's order.
 */
import type { Json } from '../../object.js';
import type { CheckFn, CheckResult, PodMeta, VersionedCheck, Check } from './check.js';
import { BASELINE_CHECKS } from './checks-baseline.js';
import { RESTRICTED_CHECKS } from './checks-restricted.js';
import { LATEST_MINOR, type LevelVersion } from './policy.js';

const byId = (a: Check, b: Check): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const ORDERED: readonly Check[] = [...[...BASELINE_CHECKS].sort(byId), ...[...RESTRICTED_CHECKS].sort(byId)];

function variantAt(check: Check, minor: number): VersionedCheck | undefined {
  return [...check.versions].reverse().find((v) => v.minVersion <= minor);
}

const cache = new Map<string, CheckFn[]>();

/** The check functions of `lv`, in message order (memoised per level and version). */
export function checksFor(lv: LevelVersion): CheckFn[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version === 'latest' || lv.version > LATEST_MINOR ? LATEST_MINOR : lv.version;
  const key = `${lv.level}:${minor}`;
  let fns = cache.get(key);
  if (fns) return fns;
  const variants = ORDERED.map((c) => ({ check: c, variant: variantAt(c, minor) }));
  const overridden = new Set(lv.level === 'restricted' ? variants.flatMap((x) => (x.check.level === 'restricted' ? (x.variant?.overrides ?? []) : [])) : []);
  fns = variants
    .filter((x) => x.variant && (x.check.level === 'baseline' ? !overridden.has(x.check.id) : lv.level === 'restricted'))
    .map((x) => x.variant!.check);
  cache.set(key, fns);
  return fns;
}

/** The failed checks of one evaluation, in order. */
export interface Violations {
  reasons: string[];
  details: string[];
}

export function evaluatePod(lv: LevelVersion, meta: PodMeta, spec: Json): Violations {
  const out: Violations = { reasons: [], details: [] };
  for (const fn of checksFor(lv)) {
    const r: CheckResult = fn(meta, spec);
    if (r.allowed) continue;
    out.reasons.push(r.reason || 'unknown forbidden reason');
    out.details.push(r.detail);
  }
  return out;
}

export const allowed = (v: Violations): boolean => v.reasons.length === 0;

/** `reason (detail), reason`: the form of a refusal or warning for one object. */
export function forbiddenDetail(v: Violations): string {
  return v.reasons.map((r, i) => (v.details[i] ? `${r} (${v.details[i]})` : r)).join(', ');
}

/** `reason, reason`: the form of the per-pod lines when a namespace's level changes. */
export function forbiddenReason(v: Violations): string {
  return v.reasons.join(', ');
}
