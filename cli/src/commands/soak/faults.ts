/**
 * The fault injectors: one function per fault kind of ./plan.ts, each leaving the cluster running
 * again when it returns (a killed component is started through the lab's own functions). Findings
 * that can only be seen during the fault (the ledger after a server kill, node Ready around a
 * runtime outage) are returned; everything else is judged after the round converged.
 */
import { delay, pollUntil } from '@nodelet/base';
import { NODES, PODS, type ApiClient, type Node } from '@nodelet/api';
import { connectCriClient } from '@nodelet/cri-client';
import type { CniFailpoint } from './cni-failpoint.js';
import type { Finding } from './invariants.js';
import type { LabControl } from './lab-control.js';
import type { Ledger } from './ledger.js';
import type { LogDisk } from './log-disk.js';
import type { Fault } from './plan.js';
import type { SoakWriter } from './writer.js';
import { SOAK_NAMESPACE } from './workloads.js';

/** kubelet-like promise of the issue: Ready again within 10 s of the runtime coming back. */
export const READY_AFTER_RUNTIME_MS = 10_000;
/** How soon the latest pod status must reach a server that came back. */
export const STATUS_FLUSH_MS = 15_000;

export interface FaultContext {
  lab: LabControl;
  fp: CniFailpoint;
  disk: LogDisk;
  writer: SoakWriter;
  ledger: Ledger;
  api: ApiClient;
  nodeName: string;
  round: number;
  say(line: string): void;
}

export interface FaultOutcome {
  findings: Finding[];
  notes: string[];
  /** Pods whose containers the fault itself stopped (not evidence for `no-unprovoked-restarts`). */
  touched: string[];
}

export async function injectFault(f: Fault, ctx: FaultContext): Promise<FaultOutcome> {
  const out: FaultOutcome = { findings: [], notes: [], touched: [] };
  const { lab, fp, writer } = ctx;
  switch (f.kind) {
    case 'agent-kill-burst':
      await writer.scale('burst', f.burst);
      await delay(f.killAfterMs);
      await killAgentAndRestart(ctx, f.downMs);
      break;
    case 'agent-kill-cni-add': {
      fp.arm({ mode: 'hold', seconds: 2 });
      await writer.scale('burst', f.burst);
      const held = await fp.waitHeld(30_000);
      if (!held) out.notes.push('no CNI ADD reached the failpoint within 30 s; the agent was killed anyway');
      await killAgentAndRestart(ctx, f.downMs, () => fp.disarm());
      break;
    }
    case 'agent-kill-status': {
      await writer.scale('burst', f.burst);
      const running = await pollUntil('a burst pod to run', async () => {
        const pods = await ctx.api.list(PODS, { namespace: SOAK_NAMESPACE, labelSelector: 'app=burst', timeoutMs: 5_000 });
        return pods.items.some((p) => p.status?.phase === 'Running') || undefined;
      }, { timeoutMs: 60_000, intervalMs: 100 }).catch(() => false);
      if (!running) out.notes.push('no burst pod reached Running within 60 s; the agent was killed anyway');
      await killAgentAndRestart(ctx, f.downMs);
      break;
    }
    case 'server-kill': {
      const stop = new AbortController();
      const writers = [0, 1].map((w) => ledgerWriter(ctx, `ledger-r${ctx.round}-${w}`, stop.signal));
      await delay(f.killAfterMs);
      await lab.kill('server', 'SIGKILL');
      stop.abort();
      const written = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
      await lab.start('server');
      out.notes.push(`${written} ledger writes acknowledged before the kill`);
      out.findings.push(...(await ledgerFindings(ctx)));
      break;
    }
    case 'server-away': {
      const victim = await runningWebPod(ctx.api);
      const back = Date.now() + f.awayMs;
      let restarted: string | undefined;
      await lab.kill('server', 'SIGTERM');
      // A write while it is away: never acknowledged, so the ledger accepts either outcome.
      await writer.scale('web', writer.replicas('web'));
      if (victim) {
        // A container dies while the server is away: the agent must restart it without the API.
        out.touched.push(victim.uid);
        restarted = await restartWithoutApi(ctx, victim, Math.max(5_000, back - Date.now()));
        if (!restarted) out.findings.push({ invariant: 'restart-while-api-away', key: `r${ctx.round}`, message: `container "main" of ${victim.pod} was stopped while the API server was away and not restarted within ${Math.round(Math.max(5_000, back - Date.now()) / 1000)} s` });
      }
      await delay(Math.max(0, back - Date.now()));
      await lab.start('server');
      out.findings.push(...(await ledgerFindings(ctx)));
      if (victim && restarted) out.findings.push(...(await statusAfterApiBack(ctx, victim, restarted)));
      break;
    }
    case 'containerd-kill': {
      await lab.kill('containerd', 'SIGKILL');
      await lab.start('containerd');
      out.findings.push(...(await readyAfterRuntime(ctx, Date.now(), false)));
      break;
    }
    case 'containerd-restart': {
      await lab.kill('containerd', 'SIGTERM');
      const down = await watchNotReady(ctx, f.awayMs);
      if (!down.sawNotReady) out.findings.push({ invariant: 'notready-while-runtime-down', key: `r${ctx.round}`, message: `node "${ctx.nodeName}" stayed Ready for ${f.awayMs / 1000} s while its runtime was stopped` });
      else out.notes.push(`NotReady while the runtime was down: ${down.message}`);
      await lab.start('containerd');
      out.findings.push(...(await readyAfterRuntime(ctx, Date.now(), down.sawNotReady)));
      break;
    }
    case 'cni-crash':
    case 'cni-slow': {
      const mode = f.kind === 'cni-slow' ? 'slow' : f.when === 'before' ? 'crash-before' : 'crash-after';
      const seen = fp.counts()[mode] ?? 0;
      fp.arm(f.kind === 'cni-slow' ? { mode: 'slow', seconds: f.delayS } : { mode: mode as 'crash-before' | 'crash-after' });
      await writer.scale('burst', f.burst);
      // The window starts with the first ADD that meets the failpoint (pods take a while to get there).
      const hit = await pollUntil('a CNI ADD to meet the failpoint', () => (fp.counts()[mode] ?? 0) > seen || undefined, { timeoutMs: 60_000, intervalMs: 100 }).catch(() => false);
      if (hit) await delay(f.windowMs);
      fp.disarm();
      out.notes.push(hit ? `${(fp.counts()[mode] ?? 0) - seen} CNI ADDs met the failpoint (${mode})` : 'no CNI ADD met the failpoint within 60 s');
      break;
    }
    case 'disk-full':
      ctx.disk.fill(f.percent);
      out.notes.push(`pod log filesystem ${ctx.disk.usedPercent().toFixed(0)} % full`);
      break;
  }
  return out;
}

async function killAgentAndRestart(ctx: FaultContext, downMs: number, whileDown?: () => void): Promise<void> {
  const pid = await ctx.lab.kill('agent', 'SIGKILL');
  ctx.say(`    agent (pid ${pid ?? '?'}) killed`);
  whileDown?.();
  await delay(downMs);
  await ctx.lab.start('agent');
}

/** Writes seq 0, 1, 2… to one ConfigMap until `signal` or the first failed write. Returns how many were acknowledged. */
async function ledgerWriter(ctx: FaultContext, name: string, signal: AbortSignal): Promise<number> {
  let seq = 0;
  while (!signal.aborted && (await ctx.writer.ledgerWrite(name, seq, signal))) seq++;
  return seq;
}

async function ledgerFindings(ctx: FaultContext): Promise<Finding[]> {
  const problems = await pollUntil('the API server to serve the ledger', () => ctx.ledger.verify(ctx.api), { timeoutMs: 30_000, intervalMs: 500 });
  return problems.map((message, i) => ({ invariant: 'ledger' as const, key: `r${ctx.round}-${i}`, message }));
}

function readyCondition(n: Node): { status: string; message: string } {
  const c = n.status?.conditions?.find((x) => x.type === 'Ready');
  return { status: c?.status ?? 'Unknown', message: c?.message ?? '' };
}

/** Polls the Node for `ms`; reports whether Ready went away and with what message. */
async function watchNotReady(ctx: FaultContext, ms: number): Promise<{ sawNotReady: boolean; message: string }> {
  const until = Date.now() + ms;
  let seen: { sawNotReady: boolean; message: string } = { sawNotReady: false, message: '' };
  while (Date.now() < until) {
    try {
      const r = readyCondition(await ctx.api.get(NODES, ctx.nodeName, { timeoutMs: 2_000 }));
      if (r.status !== 'True' && !seen.sawNotReady) seen = { sawNotReady: true, message: r.message };
    } catch {
      // the server is fine during a runtime outage; a slow answer just skips one look
    }
    await delay(250);
  }
  return seen;
}

/** Node Ready must be True within READY_AFTER_RUNTIME_MS of `backAt`; waits up to 60 s to report how long it took. */
async function readyAfterRuntime(ctx: FaultContext, backAt: number, wasDown: boolean): Promise<Finding[]> {
  const readyAt = await pollUntil('node Ready', async () => (readyCondition(await ctx.api.get(NODES, ctx.nodeName, { timeoutMs: 2_000 })).status === 'True' ? Date.now() : undefined), { timeoutMs: 60_000, intervalMs: 200 }).catch(() => undefined); // not Ready within 60 s: reported as the finding below
  const took = readyAt === undefined ? undefined : readyAt - backAt;
  if (took !== undefined && took <= READY_AFTER_RUNTIME_MS) return [];
  return [{ invariant: 'node-ready-after-runtime', key: `r${ctx.round}`, message: `node "${ctx.nodeName}" ${took === undefined ? 'not Ready 60 s' : `Ready only ${(took / 1000).toFixed(1)} s`} after its runtime came back${wasDown ? ' (it had gone NotReady)' : ''}` }];
}

/** A Ready pod of the web deployment and its running container (the first by name, for repeatability). */
async function runningWebPod(api: ApiClient): Promise<{ uid: string; pod: string; containerID: string } | undefined> {
  const pods = await api.list(PODS, { namespace: SOAK_NAMESPACE, labelSelector: 'app=web', timeoutMs: 5_000 }).catch(() => undefined); // API unreachable this round: no victim, the fault is skipped
  const p = pods?.items
    .filter((x) => !x.metadata?.deletionTimestamp && x.status?.containerStatuses?.[0]?.state?.running && x.status.containerStatuses[0].containerID)
    .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1))[0];
  if (!p) return undefined;
  return { uid: p.metadata!.uid!, pod: `${SOAK_NAMESPACE}/${p.metadata!.name}`, containerID: p.status!.containerStatuses![0]!.containerID!.replace(/^[a-z]+:\/\//, '') };
}

/** Stops the victim's container through CRI and waits for the agent to run a new one. */
async function restartWithoutApi(ctx: FaultContext, victim: { uid: string; containerID: string }, withinMs: number): Promise<string | undefined> {
  const { client } = await connectCriClient({ endpoint: ctx.lab.runtimeEndpoint, timeoutMs: 10_000 });
  try {
    await client.runtime.stopContainer({ containerId: victim.containerID, timeout: 0 }, { timeoutMs: 30_000 });
    return await pollUntil('a new container', async () => {
      const cs = (await client.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': victim.uid } } }, { timeoutMs: 5_000 })).containers ?? [];
      return cs.find((c) => c.id !== victim.containerID && String(c.state) === 'CONTAINER_RUNNING')?.id;
    }, { timeoutMs: withinMs, intervalMs: 250 }).catch(() => undefined); // no new container in time: the caller reports it
  } finally {
    client.close();
  }
}

/** Once the server is back, the pod's status must name the new container within STATUS_FLUSH_MS. */
async function statusAfterApiBack(ctx: FaultContext, victim: { uid: string; pod: string }, newId: string): Promise<Finding[]> {
  const name = victim.pod.split('/')[1]!;
  const ok = await pollUntil('the restarted container in the pod status', async () => {
    const p = await ctx.api.get(PODS, name, { namespace: SOAK_NAMESPACE, timeoutMs: 2_000 });
    return p.status?.containerStatuses?.[0]?.containerID?.endsWith(newId) || undefined;
  }, { timeoutMs: STATUS_FLUSH_MS, intervalMs: 250 }).catch(() => false);
  return ok ? [] : [{ invariant: 'status-after-api-back', key: `r${ctx.round}`, message: `${victim.pod}: the container restarted while the API server was away (${newId.slice(0, 13)}) is not in its status ${STATUS_FLUSH_MS / 1000} s after the server came back` }];
}
