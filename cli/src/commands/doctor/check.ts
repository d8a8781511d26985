/**
 * The preflight check model of `nodelet doctor` (kubeadm preflight-like): each check returns one
 * line — pass, warn or fail — and, when not passing, the fix. The exit code is the worst result
 * (0 pass, 1 warn, 2 fail) so scripts can gate on it.
 */
export type CheckLevel = 'pass' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** Stable identifier, e.g. "runtime.socket". */
  id: string;
  level: CheckLevel;
  /** What was found, one line. */
  message: string;
  /** What to do about it (absent on pass). */
  fix?: string;
}

export interface Check {
  id: string;
  /** Short human title. */
  title: string;
  run(signal: AbortSignal): Promise<CheckResult | CheckResult[]>;
}

const RANK: Record<CheckLevel, number> = { skip: 0, pass: 0, warn: 1, fail: 2 };

export function worst(results: CheckResult[]): CheckLevel {
  return results.reduce<CheckLevel>((w, r) => (RANK[r.level] > RANK[w] ? r.level : w), 'pass');
}

export function exitCodeFor(results: CheckResult[]): number {
  return RANK[worst(results)];
}

/** Runs checks one after another, each with its own deadline; a throwing check is a failure. */
export async function runChecks(checks: Check[], opts: { timeoutMs?: number } = {}): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const c of checks) {
    const signal = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
    try {
      const r = await c.run(signal);
      out.push(...(Array.isArray(r) ? r : [r]));
    } catch (err) {
      out.push({ id: c.id, level: 'fail', message: `${c.title}: check failed: ${(err as Error).message}`, fix: 'rerun with --verbose' });
    }
  }
  return out;
}

export function formatResults(results: CheckResult[]): string {
  const tag: Record<CheckLevel, string> = { pass: '[pass]', warn: '[warn]', fail: '[FAIL]', skip: '[skip]' };
  return results
    .map((r) => `${tag[r.level]} ${r.id}: ${r.message}${r.fix && r.level !== 'pass' ? `\n       fix: ${r.fix}` : ''}`)
    .join('\n');
}

/** The last line of `nodelet doctor`: how many checks passed, warned and failed (and were skipped, if any). */
export function summaryLine(results: CheckResult[]): string {
  const n = (level: CheckLevel): number => results.filter((r) => r.level === level).length;
  const plural = (k: number, one: string, many: string): string => `${k} ${k === 1 ? one : many}`;
  const parts = [`${n('pass')} passed`, plural(n('warn'), 'warning', 'warnings'), `${n('fail')} failed`];
  if (n('skip')) parts.push(`${n('skip')} skipped`);
  return parts.join(', ');
}
