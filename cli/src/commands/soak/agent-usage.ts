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
    if (p !== undefined) got.push(await agentUsage(p).catch(() => undefined as unknown as AgentUsage));
  }
  const ok = got.filter(Boolean);
  if (!ok.length) return undefined;
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { pid: ok.at(-1)!.pid, rssKiB: med(ok.map((u) => u.rssKiB)), fds: med(ok.map((u) => u.fds)) };
}

/** Within `tolerance` (0.1 = 10 %) of before, or why not. */
export function usageDrift(before: AgentUsage, after: AgentUsage, tolerance = 0.1): string | undefined {
  const bad: string[] = [];
  if (after.rssKiB > before.rssKiB * (1 + tolerance)) bad.push(`RSS ${(before.rssKiB / 1024).toFixed(1)} → ${(after.rssKiB / 1024).toFixed(1)} MiB`);
  if (after.fds > before.fds * (1 + tolerance)) bad.push(`fds ${before.fds} → ${after.fds}`);
  return bad.length ? `the agent grew more than ${tolerance * 100} %: ${bad.join(', ')}${before.pid !== after.pid ? ` (pid ${before.pid} → ${after.pid}: restarted by the faults)` : ''}` : undefined;
}
