/**
 * Where a pod of bench/density waits between create and Running: the watch-precise times the
 * bench's own pod watch sees each step, per pod, and the distribution of each stage.
 *
 *   created   creationTimestamp (the SLI's start; whole seconds)
 *   added     the watch's ADDED event                  ─ stage `create → seen`  (apiserver + watch lag)
 *   bound     first event with spec.nodeName          ─ stage `seen → bound`   (scheduler queue + bind)
 *   agent     first event with status.startTime       ─ stage `bound → agent`  (the node's watch, admission,
 *             (the agent's first status write)                                   first sync, status write)
 *   running   first event with phase Running          ─ stage `agent → Running` (sandbox, containers,
 *                                                                                 PLEG, status write)
 *
 * With --count-writes, `seen → bound` and `bound → agent` are each split at the moment the server
 * received the request (the binding; the node's first status patch; from the audit log): the
 * writer's wait before it sent it, and the server's time on it plus the watch's delivery.
 *
 * All four are seen by one watch, so its delivery lag is in every time alike and cancels out of
 * the stages after the first; the figures do not depend on how fast the machine creates pods.
 */
import type { Pod } from '@nodelet/api';
import { percentile } from './lib/percentile.js';

/** Times (ms since the epoch) at which the bench saw one pod reach each step. */
export interface PodSeen {
  created: number;
  added: number;
  /** With --count-writes: when the server received the pod's binding, and its node's first status patch (audit log). */
  bindSent?: number;
  statusSent?: number;
  bound?: number;
  agent?: number;
  running?: number;
}

/** Records what one watch event of `p` shows at `now` into `seen` (first sighting of each step wins). */
export function noteStages(seen: Map<string, PodSeen>, p: Pod, now: number): PodSeen {
  const name = p.metadata.name!;
  let s = seen.get(name);
  if (!s) seen.set(name, (s = { created: Date.parse(p.metadata.creationTimestamp!), added: now }));
  if (s.bound === undefined && p.spec?.nodeName) s.bound = now;
  if (s.agent === undefined && p.status?.startTime) s.agent = now;
  if (s.running === undefined && p.status?.phase === 'Running') s.running = now;
  return s;
}

/** One stage's distribution in seconds over the pods that reached both its ends. */
export interface StageFigures {
  stage: string;
  pods: number;
  p50S: number;
  p90S: number;
  p99S: number;
  maxS: number;
}

const STAGES: Array<[string, (s: PodSeen) => number | undefined, (s: PodSeen) => number | undefined]> = [
  ['create → seen', (s) => s.created, (s) => s.added],
  ['seen → bound', (s) => s.added, (s) => s.bound],
  ['  seen → binding received', (s) => s.added, (s) => s.bindSent],
  ['  binding received → bound', (s) => s.bindSent, (s) => s.bound],
  ['bound → agent', (s) => s.bound, (s) => s.agent],
  ['  bound → status received', (s) => s.bound, (s) => s.statusSent],
  ['  status received → agent', (s) => s.statusSent, (s) => s.agent],
  ['agent → Running', (s) => s.agent, (s) => s.running],
];

/** Each stage's p50/p90/p99/max over `pods`. */
export function stageFigures(pods: Iterable<PodSeen>): StageFigures[] {
  const list = [...pods];
  // The split rows exist only when some pod has their times (--count-writes).
  return STAGES.flatMap(([stage, from, to]) => {
    const d: number[] = [];
    for (const s of list) {
      const a = from(s);
      const b = to(s);
      if (a !== undefined && b !== undefined) d.push((b - a) / 1000);
    }
    if (d.length === 0 && stage.startsWith(' ')) return [];
    return [{ stage, pods: d.length, p50S: percentile(d, 50), p90S: percentile(d, 90), p99S: percentile(d, 99), maxS: percentile(d, 100) }];
  });
}

/** The stages as a table, one stage a line. */
export function stagesTable(stages: readonly StageFigures[]): string {
  const f = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
  const rows = [['stage', 'pods', 'p50 s', 'p90 s', 'p99 s', 'max s'], ...stages.map((s) => [s.stage, String(s.pods), f(s.p50S), f(s.p90S), f(s.p99S), f(s.maxS)])];
  const w = rows[0]!.map((_h, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ')).join('\n');
}
