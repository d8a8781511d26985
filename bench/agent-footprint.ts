/**
 * bench/agent-footprint: what the agent costs the node, measured on the built dist the way
 * `nodelet lab up` runs it (`node bin/nodelet agent …`), beside the same measurement of a baseline
 * checkout (the old agent) in the same run:
 *
 *   spawn ──▶ node Ready                      start-up time (again at the end: a restart with the pods)
 *   0 pods, idle  ─ 60 s ─▶                    RSS, CPU % of a core
 *   30 pods, idle ─ 60 s ─▶  forced GC         RSS, V8 heap used, external/arrayBuffers, CPU
 *   churn 500 more pods (waves of 30: create, Ready, delete, gone)
 *   30 pods, idle ─ 60 s ─▶  forced GC         the same again: growth = after / before
 *
 * Each variant gets its own containerd and API server (agent integration harness), so neither
 * agent sees the other's node or pods. The memory figures come from a preload
 * (bench/lib/footprint-probe.mjs) that runs two full GCs and reads process.memoryUsage() on
 * request over IPC, so the agents under test need no debug hooks.
 *
 *   sudo flock /tmp/nodelet-itest.lock node --conditions=source --import tsx bench/agent-footprint.ts \
 *     [--baseline /tmp/nodelet-base] [--pods 30] [--churn 500] [--idle-s 60] [--settle-s 15] [--snapshots DIR] [--node-args '--cpu-prof …'] [--baseline-node-args …]
 *     [--counters] [--profile-dir DIR]
 *
 * `--baseline` is a checkout of the old commit with `npx tsc -b` run in it (docs/performance.md,
 * "Agent footprint"). `--snapshots DIR` also writes heap snapshots of the current agent before and
 * after the churn (for docs/performance.md's heap findings). `--counters` preloads
 * bench/lib/idle-counters.mjs into both agents and prints what each idle window held (CPU ms, GCs
 * and their ms, MiB allocated, pod worker passes (resyncs), CRI calls by RPC, API requests by kind, connections opened, CPU by
 * thread, timers fired by delay, and with `--env NODELET_IDLE_TIMERS=1` the current agent's
 * timers by where they were set);
 * `--profile-dir DIR` (implies `--counters`) also writes a CPU profile of each window,
 * `<variant>-<window>.cpuprofile`. Needs root, containerd, runc and the CNI
 * plugins, like the agent integration tests.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PODS, NODES, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startNodeletProcess, type TestProcess } from '@nodelet/base/testing';
import { AGENT_NODE_OPTIONS } from '@nodelet/systemd';
import { startHarness, podSpec, type Harness } from '../agent/test/integration/harness.js';
import { sampleProcess, threadCpuSeconds } from './lib/proc-sample.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const PODS_N = Number(arg('--pods') ?? 30);
const CHURN = Number(arg('--churn') ?? 500);
const IDLE_MS = Number(arg('--idle-s') ?? 60) * 1000;
/** Each idle window starts this long after the stage before it ended (issue 28's targets: a median over 20 s after 15 s settled). */
const SETTLE_MS = Number(arg('--settle-s') ?? 15) * 1000;
const BASELINE = arg('--baseline');
const SNAPSHOTS = arg('--snapshots');
const PROFILE_DIR = arg('--profile-dir');
const COUNTERS = process.argv.includes('--counters') || PROFILE_DIR !== undefined;
const COUNTERS_PRELOAD = COUNTERS ? ['--import', `file://${join(import.meta.dirname, 'lib', 'idle-counters.mjs')}`] : [];
/**
 * Node flags of each agent: the current one gets what its launchers give it (AGENT_NODE_OPTIONS:
 * the systemd unit, `nodelet lab up`) plus `--node-args` (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p");
 * the baseline gets `--baseline-node-args` (the old launchers gave none).
 */
const NODE_ARGS = [...AGENT_NODE_OPTIONS.split(' '), ...(arg('--node-args')?.split(' ').filter(Boolean) ?? [])];
const BASELINE_NODE_ARGS = arg('--baseline-node-args')?.split(' ').filter(Boolean) ?? [];
/** Extra environment of the current agent (`--env K=V,K=V`), e.g. to try a malloc setting. */
const ENV = Object.fromEntries((arg('--env') ?? '').split(',').filter(Boolean).map((kv) => kv.split('=', 2) as [string, string]));
const CURRENT = resolve(import.meta.dirname, '..');
const PROBE = join(import.meta.dirname, 'lib', 'footprint-probe.mjs');
const MiB = 2 ** 20;

interface Memory {
  rssMiB: number; rssAnonMiB: number; rssFileMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number; arrayBuffersMiB: number;
  /** V8 heap spaces after the GC: used / committed MiB (code_space vs old_space separates JIT warm-up from data). */
  spaces: Record<string, { usedMiB: number; committedMiB: number }>;
}
/** What bench/lib/idle-counters.mjs counted (running totals; a window's figures are the difference of two). */
interface Counters {
  cpuMs: number; scavenges: number; fullGcs: number; gcMs: number; allocatedMiB: number;
  cri: Record<string, number>; api: Record<string, number>; connects: Record<string, number>; timers: Record<string, number>;
  /** Pod worker passes by phase and what woke them (`sync (resync)`: the syncFrequency timer), and their wall-clock ms. */
  podSyncs: Record<string, number>; podSyncMs: number;
  /** CPU ms of the process's threads by name over the window (`main` is the JS thread), from /proc (10 ms ticks). */
  threads?: Record<string, number>;
}
interface Sample {
  rssMaxMiB: number; rssMedianMiB: number; rssAnonMedianMiB: number; cpuPct: number; afterGc?: Memory; counts?: Counters;
  /**
   * Where the window fell: seconds after the steady pods became Ready (start, end). Their first
   * periodic resyncs come 60–90 s after it (syncFrequency 1 min, jitter 50 %), so a window before
   * 60 s holds none and one after holds some (docs/performance.md, "the agent's second idle window").
   */
  afterReadyS?: [number, number];
}
interface VariantResult { label: string; startupMs: number; restartMs: number; idle0: Sample; idle30: Sample; afterChurn: Sample; churnPods: number; churnMs: number }

interface ProbeReply { op: string; usage?: NodeJS.MemoryUsage; spaces?: Record<string, { used: number; committed: number }>; path?: string; totals?: Counters }

/** VmRSS split into anonymous and file-backed pages (the node binary's text is most of the latter). */
function rssParts(pid: number): { anon: number; file: number } {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0) / 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile') };
}

/**
 * The agent under test on the process kit, with the footprint probe preloaded and an IPC channel
 * to it. Ready when its node is Ready; `startupMs` is spawn → node Ready.
 */
class AgentChild {
  readonly #waiters: Array<(m: ProbeReply) => void> = [];
  #proc!: TestProcess<true>;

  static async start(h: Harness, root: string, nodeArgs: string[], env: Record<string, string>): Promise<{ agent: AgentChild; startupMs: number }> {
    const agent = new AgentChild();
    agent.#proc = await startNodeletProcess({
      name: 'nodelet agent',
      dist: true,
      root,
      nodeArgs: [...nodeArgs, '--expose-gc', '--import', `file://${PROBE}`, ...COUNTERS_PRELOAD],
      args: h.agentArgs,
      env,
      ipc: (m) => agent.#waiters.shift()?.(m as ProbeReply),
      ready: async () => {
        const n = await h.api.get(NODES, h.nodeName).catch(() => undefined);
        return n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || undefined;
      },
    });
    return { agent, startupMs: performance.now() - agent.#proc.startedAt };
  }

  get pid(): number {
    return this.#proc.pid;
  }

  #ask(m: object): Promise<ProbeReply> {
    return new Promise((res) => {
      this.#waiters.push(res);
      this.#proc.send(m);
    });
  }

  async memory(): Promise<Memory> {
    const r = await this.#ask({ op: 'measure' });
    const u = r.usage!;
    const { anon, file } = rssParts(this.pid);
    const spaces = Object.fromEntries(Object.entries(r.spaces ?? {}).map(([k, v]) => [k, { usedMiB: v.used / MiB, committedMiB: v.committed / MiB }]));
    return { spaces, rssAnonMiB: anon, rssFileMiB: file, rssMiB: u.rss / MiB, heapUsedMiB: u.heapUsed / MiB, heapTotalMiB: u.heapTotal / MiB, externalMiB: u.external / MiB, arrayBuffersMiB: u.arrayBuffers / MiB };
  }

  /** The idle counters' totals now (only with `--counters`). */
  async counters(): Promise<Counters> {
    return (await this.#ask({ op: 'counters' })).totals!;
  }

  async profileStart(): Promise<void> {
    await this.#ask({ op: 'profile-start' });
  }

  async profileStop(path: string): Promise<void> {
    await this.#ask({ op: 'profile-stop', path });
  }

  async snapshot(path: string): Promise<string> {
    return (await this.#ask({ op: 'snapshot', path })).path!;
  }

  stop(): Promise<void> {
    return this.#proc.stop();
  }
}

/** Peak and median RSS, median anonymous RSS (MiB) and CPU (% of one core) of a process over `ms`. */
async function sample(pid: number, ms: number): Promise<Sample> {
  const s = await sampleProcess(pid, ms, 500);
  return { rssMaxMiB: s.rssMaxMiB, rssMedianMiB: s.rssMedianMiB, rssAnonMedianMiB: s.rssAnonMedianMiB, cpuPct: s.cpu * 100 };
}

function pod(h: Harness, name: string): Pod {
  return podSpec(h, name, {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 5; done"] }],
  });
}

const isReady = (p: Pod): boolean => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function createReady(h: Harness, names: string[]): Promise<void> {
  await Promise.all(names.map((n) => h.api.create(PODS, pod(h, n))));
  const want = new Set(names);
  await pollUntil(`${names.length} pods Ready`, async () => (await h.api.list(PODS, { namespace: 'default' })).items.filter((p) => want.has(p.metadata.name!) && isReady(p)).length === names.length, { timeoutMs: 180_000, intervalMs: 250 });
}

async function deleteGone(h: Harness, names: string[]): Promise<void> {
  await Promise.all(names.map((n) => h.api.delete(PODS, n, { namespace: 'default' })));
  const gone = new Set(names);
  await pollUntil(`${names.length} pods gone`, async () => {
    const [pods, sandboxes] = await Promise.all([h.api.list(PODS, { namespace: 'default' }), h.cri.runtime.listPodSandbox({})]);
    return !pods.items.some((p) => gone.has(p.metadata.name!)) && !sandboxes.items.some((s) => gone.has(s.metadata?.name ?? ''));
  }, { timeoutMs: 180_000, intervalMs: 250 });
}

/** `after` less `before`, key by key (the counts of one window). */
function countsBetween(before: Counters, after: Counters): Counters {
  const sub = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]).filter(([, v]) => v !== 0));
  return {
    cpuMs: after.cpuMs - before.cpuMs, scavenges: after.scavenges - before.scavenges, fullGcs: after.fullGcs - before.fullGcs,
    gcMs: after.gcMs - before.gcMs, allocatedMiB: after.allocatedMiB - before.allocatedMiB,
    podSyncs: sub(after.podSyncs ?? {}, before.podSyncs ?? {}), podSyncMs: (after.podSyncMs ?? 0) - (before.podSyncMs ?? 0),
    cri: sub(after.cri, before.cri), api: sub(after.api, before.api), connects: sub(after.connects, before.connects), timers: sub(after.timers ?? {}, before.timers ?? {}),
  };
}

/** One line per kind of count, biggest first. */
function describeCounts(c: Counters): string {
  const list = (m: Record<string, number>, top = 99) => Object.entries(m).sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  return [
    `    CPU ${c.cpuMs.toFixed(0)} ms; GC: ${c.scavenges} scavenges, ${c.fullGcs} full, ${c.gcMs.toFixed(1)} ms; ${c.allocatedMiB.toFixed(1)} MiB allocated`,
    `    pod worker passes: ${list(c.podSyncs)} (${c.podSyncMs.toFixed(0)} ms wall-clock)`,
    `    CRI: ${list(c.cri)}`,
    `    API: ${list(c.api)}`,
    `    connections opened: ${list(c.connects)}`,
    ...(c.threads ? [`    CPU by thread (ms): ${list(c.threads)}`] : []),
    ...(Object.keys(c.timers).length ? [`    timers fired (top 15): ${list(c.timers, 15)}`] : []),
  ].join('\n');
}

async function measure(agent: AgentChild, withGc: boolean, window: string, readyAt?: number): Promise<Sample> {
  await new Promise((r) => setTimeout(r, SETTLE_MS)); // settling is a span of time, not a condition
  const t0 = performance.now();
  const before = COUNTERS ? await agent.counters() : undefined;
  const ticks0 = COUNTERS ? threadCpuSeconds(agent.pid) : {};
  if (PROFILE_DIR) await agent.profileStart();
  const s: Sample = await sample(agent.pid, IDLE_MS);
  if (readyAt !== undefined) s.afterReadyS = [Math.round((t0 - readyAt) / 1000), Math.round((performance.now() - readyAt) / 1000)];
  if (PROFILE_DIR) await agent.profileStop(join(PROFILE_DIR, `${window}.cpuprofile`));
  if (before) {
    const ticks1 = threadCpuSeconds(agent.pid);
    s.counts = { ...countsBetween(before, await agent.counters()), threads: Object.fromEntries(Object.entries(ticks1).map(([k, v]) => [k, Math.round((v - (ticks0[k] ?? 0)) * 1000)]).filter(([, v]) => v !== 0)) };
    const at = s.afterReadyS ? `, ${s.afterReadyS[0]}–${s.afterReadyS[1]} s after the ${PODS_N} pods were Ready` : '';
    console.error(`# ${window}: ${s.cpuPct.toFixed(2)} % of a core${at}\n${describeCounts(s.counts)}`);
  }
  return withGc ? { ...s, afterGc: await agent.memory() } : s;
}

async function runVariant(label: string, root: string, snapshots?: string, nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<VariantResult> {
  // make up's agent defaults: node status every 10 s, pod resync every 1 min (the harness's are faster).
  const h = await startHarness('footprint', { nodeStatusUpdateFrequency: '10s', syncFrequency: '1m' }, 7, { inProcessAgent: false });
  for (const image of [h.rt.images.busybox, h.rt.images.pause]) await h.cri.image.pullImage({ image: { image } });
  let started: { agent: AgentChild; startupMs: number };
  try {
    started = await AgentChild.start(h, root, nodeArgs, env);
  } catch (err) {
    await h.stop().catch((e: unknown) => console.error(e));
    throw err;
  }
  let agent = started.agent;
  try {
    const startupMs = started.startupMs;
    console.error(`# ${label}: agent pid ${agent.pid}, node Ready after ${startupMs.toFixed(0)} ms; idle with 0 pods…`);
    const idle0 = await measure(agent, true, `${label}-0pods`);
    const steady = Array.from({ length: PODS_N }, (_, i) => `steady-${i}`);
    await createReady(h, steady);
    const readyAt = performance.now();
    console.error(`# ${label}: ${PODS_N} pods Ready; idle…`);
    const idle30 = await measure(agent, true, `${label}-${PODS_N}pods`, readyAt);
    if (snapshots) console.error(`# heap snapshot ${await agent.snapshot(join(snapshots, `${label}-before.heapsnapshot`))}`);
    const c0 = performance.now();
    for (let done = 0, wave = 0; done < CHURN; wave++) {
      const names = Array.from({ length: Math.min(PODS_N, CHURN - done) }, (_, i) => `churn-${wave}-${i}`);
      await createReady(h, names);
      await deleteGone(h, names);
      done += names.length;
      console.error(`# ${label}: churned ${done}/${CHURN}`);
    }
    const churnMs = performance.now() - c0;
    const afterChurn = await measure(agent, true, `${label}-after-churn`, readyAt);
    if (snapshots) console.error(`# heap snapshot ${await agent.snapshot(join(snapshots, `${label}-after.heapsnapshot`))}`);
    // A restart (upgrade, crash) with warm caches and the steady pods to recover: the first
    // start of a run also pays for a fresh containerd, which made whichever variant ran first
    // look slower. The Node is deleted so that Ready is the new agent's own report.
    await agent.stop();
    await h.api.delete(NODES, h.nodeName);
    const restarted = await AgentChild.start(h, root, nodeArgs, env);
    agent = restarted.agent;
    const restartMs = restarted.startupMs;
    return { label, startupMs, restartMs, idle0, idle30, afterChurn, churnPods: CHURN, churnMs };
  } finally {
    await h.stop().catch((err: unknown) => console.error(err));
    await agent.stop();
  }
}

function figures(cur: VariantResult, base?: VariantResult): BenchFigure[] {
  const b = (f: (v: VariantResult) => number) => (base ? { baseline: { label: base.label, value: f(base) } } : {});
  const fig = (group: string, name: string, unit: string, f: (v: VariantResult) => number, target?: BenchFigure['target']): BenchFigure =>
    ({ group, name, unit, value: f(cur), ...b(f), ...(target ? { target } : {}) });
  const growth = (v: VariantResult) => (v.afterChurn.afterGc!.heapUsedMiB / v.idle30.afterGc!.heapUsedMiB - 1) * 100;
  return [
    fig('start-up', 'first spawn → node Ready', 'ms', (v) => v.startupMs),
    fig('start-up', `restart with ${PODS_N} pods → node Ready`, 'ms', (v) => v.restartMs),
    fig('0 pods', 'RSS peak', 'MiB', (v) => v.idle0.rssMaxMiB),
    fig('0 pods', 'CPU idle', '% of a core', (v) => v.idle0.cpuPct),
    fig('0 pods', 'heap used after GC', 'MiB', (v) => v.idle0.afterGc!.heapUsedMiB),
    fig(`${PODS_N} pods`, 'RSS median', 'MiB', (v) => v.idle30.rssMedianMiB, { op: '<=', value: 80 }),
    fig(`${PODS_N} pods`, 'RSS anonymous median', 'MiB', (v) => v.idle30.rssAnonMedianMiB),
    fig(`${PODS_N} pods`, 'RSS peak', 'MiB', (v) => v.idle30.rssMaxMiB),
    fig(`${PODS_N} pods`, 'CPU idle', '% of a core', (v) => v.idle30.cpuPct, { op: '<=', value: 1 }),
    fig(`${PODS_N} pods`, 'RSS after GC', 'MiB', (v) => v.idle30.afterGc!.rssMiB),
    fig(`${PODS_N} pods`, 'RSS anonymous after GC', 'MiB', (v) => v.idle30.afterGc!.rssAnonMiB),
    fig(`${PODS_N} pods`, 'heap used after GC', 'MiB', (v) => v.idle30.afterGc!.heapUsedMiB),
    fig(`${PODS_N} pods`, 'heap committed after GC', 'MiB', (v) => v.idle30.afterGc!.heapTotalMiB),
    fig(`${PODS_N} pods`, 'old space used after GC', 'MiB', (v) => v.idle30.afterGc!.spaces['old_space']?.usedMiB ?? 0),
    fig(`${PODS_N} pods`, 'external after GC', 'MiB', (v) => v.idle30.afterGc!.externalMiB),
    fig(`${PODS_N} pods`, 'arrayBuffers after GC', 'MiB', (v) => v.idle30.afterGc!.arrayBuffersMiB),
    fig(`after ${CHURN}-pod churn`, 'RSS median', 'MiB', (v) => v.afterChurn.rssMedianMiB, { op: '<=', value: 80 }),
    fig(`after ${CHURN}-pod churn`, 'RSS anonymous median', 'MiB', (v) => v.afterChurn.rssAnonMedianMiB),
    fig(`after ${CHURN}-pod churn`, 'RSS peak', 'MiB', (v) => v.afterChurn.rssMaxMiB),
    fig(`after ${CHURN}-pod churn`, 'CPU idle', '% of a core', (v) => v.afterChurn.cpuPct, { op: '<=', value: 1 }),
    fig(`after ${CHURN}-pod churn`, 'RSS after GC', 'MiB', (v) => v.afterChurn.afterGc!.rssMiB),
    fig(`after ${CHURN}-pod churn`, 'heap used after GC', 'MiB', (v) => v.afterChurn.afterGc!.heapUsedMiB),
    fig(`after ${CHURN}-pod churn`, 'old space used after GC', 'MiB', (v) => v.afterChurn.afterGc!.spaces['old_space']?.usedMiB ?? 0),
    fig(`after ${CHURN}-pod churn`, 'heap growth vs before', '%', growth, { op: '<=', value: 5 }),
  ];
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/agent-footprint needs root (containerd, network namespaces)');
  process.env.AGENT_IT = '1';
  const base = BASELINE ? await runVariant('baseline', resolve(BASELINE), undefined, BASELINE_NODE_ARGS) : undefined;
  const cur = await runVariant('current', CURRENT, SNAPSHOTS, NODE_ARGS, ENV);
  const figs = figures(cur, base);
  console.log(`agent footprint: built dist, ${PODS_N} pods, churn ${CHURN}, ${IDLE_MS / 1000} s idle windows after ${SETTLE_MS / 1000} s settled (${new Date().toISOString()})`);
  for (const f of figs) {
    const label = `${f.group} ${f.name}`.padEnd(40);
    console.log(`${label} ${f.value.toFixed(2).padStart(9)} ${f.unit}${f.baseline ? `   baseline ${f.baseline.value.toFixed(2)} ${f.unit}` : ''}`);
  }
  for (const v of [base, cur]) {
    if (!v) continue;
    for (const [window, s] of [['0 pods', v.idle0], [`${PODS_N} pods`, v.idle30], [`after ${CHURN}-pod churn`, v.afterChurn]] as const) {
      const at = s.afterReadyS ? `, ${s.afterReadyS[0]}–${s.afterReadyS[1]} s after the ${PODS_N} pods were Ready` : '';
      if (s.counts) console.log(`${v.label}, ${window}, what the window held (${s.cpuPct.toFixed(2)} % of a core${at}):\n${describeCounts(s.counts)}`);
    }
  }
  const { json, targetLines } = writeBenchResults('agent-footprint', figs, { details: { baseline: BASELINE, nodeArgs: NODE_ARGS, env: ENV, baselineNodeArgs: BASELINE_NODE_ARGS, current: cur, base }, svg: true });
  for (const l of targetLines) console.log(l);
  console.log(`wrote ${json}`);
}

await main();
