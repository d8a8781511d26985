/**
 * What a soak run did and found: counters kept while it runs, printed at the end (and written as
 * JSON beside the soak's state) so a run can be compared with another and replayed by its seed.
 */
import { awaitsGc, INVARIANTS, type Finding, type InvariantName } from './invariants.js';
import type { SoakMode } from './plan.js';

export interface AgentUsage {
  pid: number;
  /** Median of the looks at /proc (GC timing moves it: reported, not judged). */
  rssKiB: number;
  fds: number;
  /** What the agent still held right after a full collection (`/debug/nodelet/heap?gc=1`): V8 heap in use + external. */
  liveKiB?: number;
  /** The agent's RSS at that moment. */
  rssAfterGcKiB?: number;
}

export interface SoakFailure extends Finding {
  round: number;
}

export class SoakReport {
  readonly startedAt = Date.now();
  finishedAt?: number;
  roundsRun = 0;
  readonly podsSeen = new Set<string>();
  readonly faults: Record<string, number> = {};
  readonly checks: Partial<Record<InvariantName, number>> = {};
  readonly failures: SoakFailure[] = [];
  readonly notes: string[] = [];
  failpointAdds: Record<string, number> = {};
  writes = { acked: 0, unacked: 0 };
  created = { pods: 0, services: 0 };
  /** At the start (fresh process, no soak pods). */
  agentBefore?: AgentUsage;
  /** After the run, workload removed. */
  agentWarm?: AgentUsage;
  /** After one more fault-free churn cycle. */
  agentAfter?: AgentUsage;

  constructor(readonly seed: number, readonly mode: SoakMode, readonly plannedRounds: number) {}

  fault(kind: string, n = 1): void {
    this.faults[kind] = (this.faults[kind] ?? 0) + n;
  }

  /** Counts one check of each invariant in `names`; adds `found` (first failures per key only). */
  checked(round: number, names: readonly InvariantName[], found: readonly Finding[]): SoakFailure[] {
    for (const n of names) this.checks[n] = (this.checks[n] ?? 0) + 1;
    const fresh = found
      .filter((x) => !this.failures.some((y) => y.invariant === x.invariant && y.key === x.key))
      .map((x) => ({ ...x, round }));
    this.failures.push(...fresh);
    return fresh;
  }

  toJSON(): Record<string, unknown> {
    return {
      seed: this.seed, mode: this.mode, plannedRounds: this.plannedRounds, roundsRun: this.roundsRun,
      durationS: Math.round(((this.finishedAt ?? Date.now()) - this.startedAt) / 1000),
      podsSeen: this.podsSeen.size, created: this.created, writes: this.writes, faults: this.faults,
      failpointAdds: this.failpointAdds, checks: this.checks, failures: this.failures, awaitingGc: this.failures.filter(awaitsGc).length, notes: this.notes,
      agentBefore: this.agentBefore, agentWarm: this.agentWarm, agentAfter: this.agentAfter,
    };
  }

  format(replay: string): string {
    const lines: string[] = [];
    const mins = (((this.finishedAt ?? Date.now()) - this.startedAt) / 60_000).toFixed(1);
    lines.push(`soak ${this.mode}, seed ${this.seed}: ${this.roundsRun}/${this.plannedRounds} rounds in ${mins} min`);
    lines.push(`  pods: ${this.created.pods} created directly, ${this.podsSeen.size} seen on the node in all; services created: ${this.created.services}`);
    lines.push(`  API writes: ${this.writes.acked} acknowledged, ${this.writes.unacked} not`);
    lines.push(`  faults: ${Object.entries(this.faults).map(([k, v]) => `${k}×${v}`).join(', ') || 'none'}`);
    if (Object.keys(this.failpointAdds).length) lines.push(`  CNI ADDs that met the failpoint: ${Object.entries(this.failpointAdds).map(([k, v]) => `${k}×${v}`).join(', ')}`);
    const live = (x: AgentUsage): string => (x.liveKiB !== undefined ? `, live ${mib(x.liveKiB)} MiB after a full GC (RSS then ${mib(x.rssAfterGcKiB ?? NaN)})` : '');
    const fmt = (x: AgentUsage | undefined): string => (x ? `RSS ${mib(x.rssKiB)} MiB${live(x)} / ${x.fds} fds (pid ${x.pid})` : '(not measured)');
    lines.push(`  agent: start ${fmt(this.agentBefore)}; after the run ${fmt(this.agentWarm)}; after a quiet cycle ${fmt(this.agentAfter)}`);
    lines.push('  invariants (checks / broken):');
    for (const n of INVARIANTS) {
      const broken = this.failures.filter((x) => x.invariant === n).length;
      lines.push(`    ${broken ? 'FAIL' : ' ok '} ${n.padEnd(28)} ${String(this.checks[n] ?? 0).padStart(4)} / ${broken}`);
    }
    for (const note of this.notes) lines.push(`  note: ${note}`);
    const gc = this.failures.filter(awaitsGc);
    const other = this.failures.filter((x) => !awaitsGc(x));
    if (gc.length) {
      lines.push(`  leftovers only the agent's garbage collector removes (dead sandboxes, dead containers beyond the newest; issue 15 item 1): ${gc.length}`);
      for (const x of gc.slice(0, GC_SHOWN)) lines.push(`    round ${x.round + 1} ${x.invariant}: ${x.message}`);
      if (gc.length > GC_SHOWN) lines.push(`    … and ${gc.length - GC_SHOWN} more (report JSON)`);
    }
    if (other.length) {
      const first = other[0]!;
      lines.push(`  first broken invariant (round ${first.round + 1}): ${first.invariant}: ${first.message}`);
    }
    if (this.failures.length) lines.push(`  replay: ${replay}`);
    return lines.join('\n');
  }
}

const mib = (kib: number): string => (kib / 1024).toFixed(1);
const GC_SHOWN = 8;
