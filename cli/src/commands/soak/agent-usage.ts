/**
 * The agent's memory and open descriptors (the `agent-resources` invariant): RSS and fds from
 * /proc, and what it still holds after a full collection from its node API
 * (`/debug/nodelet/heap?gc=1` through the API server's nodes/proxy).
 */
import { readdir, readFile } from 'node:fs/promises';
import { delay } from '@nodelet/base';
import { asHeapReport, type ApiClient } from '@nodelet/api';
import type { AgentUsage } from './report.js';

export async function agentUsage(pid: number): Promise<AgentUsage> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { pid, rssKiB, fds };
}

/** The agent's heap right after a full collection, asked of its node API through the API server. */
export async function agentLiveHeap(api: ApiClient, nodeName: string): Promise<Pick<AgentUsage, 'liveKiB' | 'rssAfterGcKiB'>> {
  const body = await api.getRaw(`/api/v1/nodes/${encodeURIComponent(nodeName)}/proxy/debug/nodelet/heap`, { query: { gc: 1 }, timeoutMs: 15_000 });
  const h = asHeapReport(JSON.parse(body.toString('utf8')));
  if (!h?.collected) throw new Error(`the agent's /debug/nodelet/heap?gc=1 answered ${body.toString('utf8').slice(0, 200)}`);
  return { liveKiB: (h.heapUsedBytes + h.externalBytes) / 1024, rssAfterGcKiB: h.rssBytes / 1024 };
}

/**
 * The median of `samples` looks at /proc spread over `ms` (one look catches the garbage collector
 * mid-cycle), then, when `live` is given, the heap after a full collection.
 */
export async function settledUsage(pid: () => Promise<number | undefined>, ms: number, live?: () => Promise<Pick<AgentUsage, 'liveKiB' | 'rssAfterGcKiB'>>, samples = 5): Promise<AgentUsage | undefined> {
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
  if (!got.length) return undefined;
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const usage: AgentUsage = { pid: got.at(-1)!.pid, rssKiB: med(got.map((u) => u.rssKiB)), fds: med(got.map((u) => u.fds)) };
  return live ? { ...usage, ...(await live()) } : usage;
}

/**
 * The `agent-resources` verdict, over one fault-free churn cycle in one process (warm: after the
 * run, the workload removed; after: one more cycle later), because a process the faults restarted
 * is younger than the first baseline's:
 *
 *   - what the agent still holds after a full collection (V8 heap in use + external) may not grow
 *     by more than `tolerance`: a leak keeps what it leaks reachable, garbage is gone. The agent
 *     loads no native addon, so what it can leak is heap, external memory (Buffers) or handles;
 *   - RSS is not judged: it moves with when the collector last ran and how far V8 grew its young
 *     generation in the last burst (in CI one seed's cycle took RSS 84.9 → 95.5 MiB, and
 *     again 84.4 → 95.1 in its replay, while the heap after a full GC went 25.2 → 26.0 MiB), which made a 10 % RSS bound a coin toss;
 *   - open descriptors are compared with the lower of the two baselines, whatever process it was.
 */
export function resourceDrift(u: { fresh: AgentUsage; warm: AgentUsage; after: AgentUsage }, tolerance = 0.1): string | undefined {
  const bad: string[] = [];
  if (u.warm.pid !== u.after.pid) bad.push(`the agent restarted during the quiet cycle (pid ${u.warm.pid} → ${u.after.pid})`);
  else if (u.warm.liveKiB === undefined || u.after.liveKiB === undefined) bad.push('its heap after a full collection was not measured');
  else if (u.after.liveKiB > u.warm.liveKiB * (1 + tolerance)) bad.push(`live heap after a full GC ${mib(u.warm.liveKiB)} → ${mib(u.after.liveKiB)} MiB over one quiet churn cycle`);
  const fdBase = Math.min(u.fresh.fds, u.warm.fds);
  if (u.after.fds > fdBase * (1 + tolerance)) bad.push(`open fds ${fdBase} → ${u.after.fds}`);
  return bad.length ? `the agent grew more than ${tolerance * 100} %: ${bad.join('; ')}` : undefined;
}

const mib = (kib: number): string => (kib / 1024).toFixed(1);
