/** The agent's resident memory and open descriptors, from /proc (the `agent-resources` invariant). */
import { readdir, readFile } from 'node:fs/promises';
import { delay } from '@nodelet/base';
import type { AgentUsage } from './report.js';

export async function agentUsage(pid: number): Promise<AgentUsage> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { pid, rssKiB, fds };
}

/** The median of `samples` looks spread over `ms`: one look catches the garbage collector mid-cycle. */
export async function settledUsage(pid: () => Promise<number | undefined>, ms: number, samples = 5): Promise<AgentUsage | undefined> {
  const got: AgentUsage[] = [];
  for (let i = 0; i < samples; i++) {
    await delay(ms / samples);
    const p = await pid();
    if (p === undefined) continue;
    try {
      got.push(await agentUsage(p));
    } catch {
      // The process exited between the pidfile read and /proc: this look has nothing to say.
    }
  }
  const ok = got;
  if (!ok.length) return undefined;
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { pid: ok.at(-1)!.pid, rssKiB: med(ok.map((u) => u.rssKiB)), fds: med(ok.map((u) => u.fds)) };
}

/**
 * The `agent-resources` verdict. RSS is compared process against itself — warm (after the run, the
 * workload removed) and after one more fault-free churn cycle — because a process the faults
 * restarted is younger than the baseline's and V8 does not give memory back at once; open
 * descriptors are also compared with the first baseline, whatever process it was.
 */
export function resourceDrift(u: { fresh: AgentUsage; warm: AgentUsage; after: AgentUsage }, tolerance = 0.1): string | undefined {
  const bad: string[] = [];
  if (u.warm.pid !== u.after.pid) bad.push(`the agent restarted during the quiet cycle (pid ${u.warm.pid} → ${u.after.pid})`);
  else if (u.after.rssKiB > u.warm.rssKiB * (1 + tolerance)) bad.push(`RSS ${mib(u.warm.rssKiB)} → ${mib(u.after.rssKiB)} MiB over one quiet churn cycle`);
  const fdBase = Math.min(u.fresh.fds, u.warm.fds);
  if (u.after.fds > fdBase * (1 + tolerance)) bad.push(`open fds ${fdBase} → ${u.after.fds}`);
  return bad.length ? `the agent grew more than ${tolerance * 100} %: ${bad.join('; ')}` : undefined;
}

const mib = (kib: number): string => (kib / 1024).toFixed(1);
