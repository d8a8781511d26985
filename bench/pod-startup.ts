/**
 * bench/pod-startup: bursts of 10, 30 and 60 pods (cached images) through the real path
 *
 *   API create ──▶ nodelet agent (child process) ──▶ CRI RunPodSandbox (CNI via nodelet-cni) +
 *   CreateContainer + StartContainer ──▶ status patch ──▶ Ready seen by a watch
 *
 * beside the floor: the same sandbox + CNI + container calls made directly through cri-client,
 * N at once, in the same run against the same containerd. Also samples the agent's RSS and CPU
 * while idle and with N running pods, and prints the CPU each burst cost per pod: the machine's,
 * the agent's and the API server's (this process). Each size prints a met/missed line for the target (agent
 * p99 ≤ the floor's p99, issue #16) and the figures go to bench/results/pod-startup.json.
 *
 *   sudo flock /tmp/nodelet-itest.lock node --conditions=source --import tsx bench/pod-startup.ts [--sizes 10,30,60] [--svg waterfall.svg] [--stages] [--agent-node-args "--cpu-prof --cpu-prof-dir=DIR"]
 *
 * `--svg <file>` draws the pod journeys (docs/tracing.md) of the largest burst's p50 and p99 pods,
 * from their traces, as waterfalls in one SVG picture. `--stages` prints, per size, where each
 * pod's time went: every span of its journey (p50/p99 over the pods) beside the floor's own calls,
 * and what no span covers (the API create and watch, queues).
 *
 * Needs root, containerd, runc and the CNI plugins (like the agent integration tests).
 */
import { join } from 'node:path';
import { PODS, NODES, type Pod } from '@nodelet/api';
import { startHarness, podSpec, type Harness } from '../agent/test/integration/harness.js';
import { buildContainerConfig, buildSandboxConfig } from '../agent/src/runtime/container-config.js';
import { MANAGED_BY } from '../agent/src/kubecontainer/labels.js';
import { pickInternalIP } from '../agent/src/node/machine-info.js';
import { pollUntil } from '@nodelet/base';
import { startNodeletProcess } from '@nodelet/base/testing';
import { writeFile } from 'node:fs/promises';
import { fetchPodTrace, renderWaterfallSvg, type SvgPanel } from '@nodelet/cli';
import { SPAN } from '@nodelet/api/tracing';
import { machineCpuSeconds, processCpuSeconds, sampleProcess } from './lib/proc-sample.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { percentile, percentileIndex } from './lib/percentile.js';

const SIZES = parseSizes(process.argv);
const SVG = process.argv.includes('--svg') ? process.argv[process.argv.indexOf('--svg') + 1] : undefined;
const STAGES = process.argv.includes('--stages');
/** `--agent-node-args "…"`: node's own flags for the agent (e.g. `--cpu-prof --cpu-prof-dir=DIR`, written when it exits). */
const AGENT_NODE_ARGS = process.argv.includes('--agent-node-args') ? (process.argv[process.argv.indexOf('--agent-node-args') + 1] ?? '').split(' ').filter(Boolean) : [];

/** Peak RSS (MiB) and CPU (fraction of one core) of a process over `ms`. */
async function sample(pid: number, ms: number): Promise<{ rssMiB: number; cpu: number }> {
  const s = await sampleProcess(pid, ms);
  return { rssMiB: s.rssMaxMiB, cpu: s.cpu };
}

/** `--sizes 10,30,60` (default all three); `--pods N` is one size. Bad input is an error, not a default. */
function parseSizes(argv: string[]): number[] {
  const at = (flag: string): string | undefined => (argv.includes(flag) ? (argv[argv.indexOf(flag) + 1] ?? '') : undefined);
  const raw = at('--sizes') ?? at('--pods') ?? '10,30,60';
  const sizes = raw.split(',').map((x) => Number(x.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 110)) {
    throw new Error(`--sizes wants pod counts from 1 to 110 separated by commas, got "${raw}"`);
  }
  return sizes;
}

/**
 * CPU seconds a burst cost: the whole machine's (containerd, shims, runc, CNI plugins and all),
 * the agent's, and this process's (the API server runs in it, beside the bench's own clients).
 */
interface BurstCpu {
  machine: number;
  agent: number;
  server: number;
}

function cpuNow(agentPid: number): BurstCpu {
  return { machine: machineCpuSeconds(), agent: processCpuSeconds(agentPid), server: processCpuSeconds(process.pid) };
}

function cpuSince(start: BurstCpu, agentPid: number): BurstCpu {
  const now = cpuNow(agentPid);
  return { machine: now.machine - start.machine, agent: now.agent - start.agent, server: now.server - start.server };
}

/** Create → Ready (s) per pod name. */
async function agentBurst(h: Harness, N: number): Promise<Map<string, number>> {
  const created = new Map<string, number>();
  const ready = new Map<string, number>();
  const ac = new AbortController();
  const watching = (async () => {
    for await (const ev of h.api.watch(PODS, { namespace: 'default', signal: ac.signal })) {
      const p = ev.object as Pod;
      const name = p.metadata.name!;
      if (!ready.has(name) && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready.set(name, performance.now());
    }
  })().catch(() => undefined);
  const pods = Array.from({ length: N }, (_, i) =>
    podSpec(h, `burst-${N}-${i}`, { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"] }] }),
  );
  await Promise.all(
    pods.map(async (p) => {
      created.set(p.metadata.name!, performance.now());
      await h.api.create(PODS, p);
    }),
  );
  await pollUntil(`${N} pods Ready`, () => ready.size === N, { timeoutMs: 120_000, intervalMs: 50 });
  ac.abort();
  await watching;
  return new Map([...ready].map(([name, t]) => [name, (t - created.get(name)!) / 1000]));
}

/** The p50 and p99 pods' journeys (by create → Ready) as waterfalls in one SVG. */
async function drawJourneys(h: Harness, latency: Map<string, number>, file: string): Promise<void> {
  const byTime = [...latency].sort((a, b) => a[1] - b[1]);
  const at = (p: number) => byTime[percentileIndex(byTime.length, p)]!;
  const panels: SvgPanel[] = [];
  for (const [label, [name, seconds]] of [['p50', at(50)], ['p99', at(99)]] as const) {
    // The agent records its last step when the Ready patch's answer is back, just after the watch saw Ready.
    const trace = await pollUntil(`trace of ${name}`, async () => {
      const t = await fetchPodTrace(h.api, 'default', name);
      return t.waterfall.complete && t.spans.some((s) => s.name === SPAN.agentStatus) ? t : undefined;
    }, { timeoutMs: 10_000, intervalMs: 100, detail: () => traceDetail(h, name) });
    panels.push({ title: `${label} pod ${name} (create → Ready seen by a watch ${seconds.toFixed(3)} s)`, waterfall: trace.waterfall });
  }
  await writeFile(file, renderWaterfallSvg(panels));
  console.log(`wrote ${file}: journeys of the p50 (${at(50)[0]}) and p99 (${at(99)[0]}) pods`);
}

/** What a pod's trace holds so far, for a poll that gave up on it. */
async function traceDetail(h: Harness, name: string): Promise<string> {
  const t = await fetchPodTrace(h.api, 'default', name);
  return `complete ${t.waterfall.complete}; spans ${t.spans.map((s) => s.name).join(', ') || 'none'}${t.warnings.length ? `; ${t.warnings.join('; ')}` : ''}`;
}

/** The floor's calls per pod (s): RunPodSandbox + PodSandboxStatus, CreateContainer, StartContainer. */
type FloorCalls = { sandbox: number; create: number; start: number };

/** The floor's burst: each pod's time, and the CPU it cost up to the last start (its clean-up left out). */
async function floorBurst(h: Harness, N: number, agentPid: number, calls: FloorCalls[] = []): Promise<{ times: number[]; cpu: BurstCpu }> {
  const rt = h.cri.runtime;
  const img = (await h.cri.image.imageStatus({ image: { image: h.rt.images.busybox } })).image!.id;
  const ids: string[] = [];
  const cpu0 = cpuNow(agentPid);
  const times = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const pod: Pod = podSpec(h, `floor-${N}-${i}`, { containers: [{ name: 'c', image: h.rt.images.busybox, command: ['sh', '-c', 'while true; do sleep 1; done'] }] });
      pod.metadata.uid = `floor-${process.pid}-${N}-${i}`;
      const paths = { rootDir: join(h.dir, 'floor'), podLogsDir: join(h.dir, 'floor-logs') };
      const sandboxConfig = buildSandboxConfig(pod, 0, paths);
      delete sandboxConfig.labels![MANAGED_BY];
      const config = buildContainerConfig({ pod, container: pod.spec!.containers[0]!, type: 'regular', restartCount: 0, imageRef: img, env: [], paths, nodeMemoryBytes: 0, imageUser: {} });
      delete config.labels![MANAGED_BY];
      const t0 = performance.now();
      const { podSandboxId } = await rt.runPodSandbox({ config: sandboxConfig });
      ids.push(podSandboxId);
      await rt.podSandboxStatus({ podSandboxId });
      const t1 = performance.now();
      const { containerId } = await rt.createContainer({ podSandboxId, config, sandboxConfig });
      const t2 = performance.now();
      await rt.startContainer({ containerId });
      const t3 = performance.now();
      calls.push({ sandbox: (t1 - t0) / 1000, create: (t2 - t1) / 1000, start: (t3 - t2) / 1000 });
      return (t3 - t0) / 1000;
    }),
  );
  const cpu = cpuSince(cpu0, agentPid);
  for (const id of ids) {
    await rt.stopPodSandbox({ podSandboxId: id });
    await rt.removePodSandbox({ podSandboxId: id });
  }
  return { times, cpu };
}

/** Per span name, each pod's summed span time (s); `uncovered`: create → Ready seen minus the time any span covers. */
type StageTimes = Map<string, number[]>;

/**
 * Where each pod's create → Ready went, from its journey (docs/tracing.md): the spans' summed
 * durations by name, and the time no span covers (API create, watch delivery, queues).
 */
async function stageTimes(h: Harness, latency: Map<string, number>): Promise<StageTimes> {
  const out: StageTimes = new Map();
  const add = (k: string, v: number): void => void (out.get(k) ?? out.set(k, []).get(k)!).push(v);
  for (const [name, seconds] of latency) {
    const trace = await pollUntil(`trace of ${name}`, async () => {
      const t = await fetchPodTrace(h.api, 'default', name);
      return t.waterfall.complete && t.spans.some((s) => s.name === SPAN.agentStatus) ? t : undefined;
    }, { timeoutMs: 10_000, intervalMs: 100, detail: () => traceDetail(h, name) });
    const byName = new Map<string, number>();
    for (const sp of trace.spans) byName.set(sp.name, (byName.get(sp.name) ?? 0) + (sp.endMs - sp.startMs) / 1000);
    for (const [k, v] of byName) add(k, v);
    // The union of the spans' intervals against the pod's whole time.
    const iv = trace.spans.map((sp) => [sp.startMs, sp.endMs] as const).sort((a, b) => a[0] - b[0]);
    let covered = 0;
    let end = -Infinity;
    for (const [a, b] of iv) {
      if (b <= end) continue;
      covered += b - Math.max(a, end);
      end = b;
    }
    add('(no span: API, watch, queues)', Math.max(0, seconds - covered / 1000));
  }
  return out;
}

function printStages(r: SizeResult): void {
  if (!r.stages) return;
  const ms = (xs: number[], p: number): string => (xs.length ? (percentile(xs, p) * 1000).toFixed(0) : '-').padStart(7);
  const floorOf: Record<string, keyof FloorCalls> = { [SPAN.agentSandbox]: 'sandbox', [SPAN.agentContainerCreate]: 'create', [SPAN.agentContainerStart]: 'start' };
  console.log(`where the time went, ${r.n} pods (ms per pod over the pods; a parent span includes its children)`);
  console.log(`  ${'span'.padEnd(34)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}   floor's call p50     p99`);
  for (const [name, xs] of [...r.stages].sort((a, b) => percentile(b[1], 50) - percentile(a[1], 50))) {
    const f = floorOf[name];
    const fx = f ? r.floorCalls.map((c) => c[f]) : [];
    console.log(`  ${name.padEnd(34)} ${ms(xs, 50)} ${ms(xs, 99)}   ${f ? `${f.padEnd(12)} ${ms(fx, 50)} ${ms(fx, 99)}` : ''}`);
  }
  console.log('');
}

/** What one size measured, in the shape of bench/lib/results.ts's figures. */
interface SizeResult {
  n: number;
  agent: number[];
  floor: number[];
  floorCalls: FloorCalls[];
  stages?: StageTimes;
  /** CPU seconds of each burst, create → last Ready (agent) and first call → last start (floor). */
  cpu: { agent: BurstCpu; floor: BurstCpu };
  idle: { rssMiB: number; cpu: number };
  busy: { rssMiB: number; cpu: number };
}

/** One size: the agent's burst, its pods deleted, then the floor's burst of the same size. */
async function runSize(h: Harness, pid: number, n: number): Promise<SizeResult> {
  const idle = await sample(pid, 5000);
  const cpu0 = cpuNow(pid);
  const byPod = await agentBurst(h, n);
  const agentCpu = cpuSince(cpu0, pid);
  const agent = [...byPod.values()];
  if (SVG && n === SIZES.at(-1)) await drawJourneys(h, byPod, SVG);
  const stages = STAGES ? await stageTimes(h, byPod) : undefined;
  const busy = await sample(pid, 5000);
  const pods = await h.api.list(PODS, { namespace: 'default' });
  await Promise.all(pods.items.map((p) => h.api.delete(PODS, p.metadata.name!, { namespace: 'default', gracePeriodSeconds: 1 })));
  await pollUntil('burst pods gone', async () => (await h.cri.runtime.listPodSandbox({})).items.length === 0, { timeoutMs: 120_000, intervalMs: 200 });
  await pollUntil('burst pods gone from the API', async () => (await h.api.list(PODS, { namespace: 'default' })).items.length === 0, { timeoutMs: 60_000, intervalMs: 200 });
  const floorCalls: FloorCalls[] = [];
  const { times: floor, cpu: floorCpu } = await floorBurst(h, n, pid, floorCalls);
  return { n, agent, floor, floorCalls, idle, busy, cpu: { agent: agentCpu, floor: floorCpu }, ...(stages ? { stages } : {}) };
}

function printSize(r: SizeResult): void {
  const row = (name: string, xs: number[]) => `${name.padEnd(28)} p50 ${percentile(xs, 50).toFixed(3)} s   p99 ${percentile(xs, 99).toFixed(3)} s   max ${Math.max(...xs).toFixed(3)} s`;
  const [a99, f99] = [percentile(r.agent, 99), percentile(r.floor, 99)];
  console.log(`pod startup, ${r.n} pods at once, cached images (${new Date().toISOString()})`);
  console.log(row('API create → Ready (watch)', r.agent));
  console.log(row('floor: direct CRI+CNI calls', r.floor));
  console.log(`ratio p50 ${(percentile(r.agent, 50) / percentile(r.floor, 50)).toFixed(2)}×   p99 ${(a99 / f99).toFixed(2)}×`);
  console.log(`${r.n} pods: create → Ready p99 ≤ floor p99 (${f99.toFixed(3)} s): ${a99 <= f99 ? 'met' : 'missed'} (${a99.toFixed(3)} s, ${(a99 / f99).toFixed(2)}×)`);
  const per = (x: number): string => `${((x / r.n) * 1000).toFixed(0)} ms`;
  const { agent: ac, floor: fc } = r.cpu;
  console.log(`CPU per pod in the burst: machine ${per(ac.machine)} (agent ${per(ac.agent)}, API server ${per(ac.server)}, the rest ${per(ac.machine - ac.agent - ac.server)}); floor's burst: machine ${per(fc.machine)} (agent as CNI service ${per(fc.agent)}, the rest ${per(fc.machine - fc.agent - fc.server)})`);
  console.log(`agent RSS idle ${r.idle.rssMiB.toFixed(0)} MiB, with ${r.n} pods ${r.busy.rssMiB.toFixed(0)} MiB; CPU idle ${(r.idle.cpu * 100).toFixed(1)} %, with ${r.n} pods ${(r.busy.cpu * 100).toFixed(1)} % of a core`);
  console.log('');
}

/** The figures per size for bench/results/pod-startup.json: p99 against the floor's p99 (the target), p50 beside the floor's. */
function figures(results: SizeResult[]): BenchFigure[] {
  return results.flatMap((r) => {
    const group = `${r.n} pods`;
    const f99 = percentile(r.floor, 99);
    return [
      { name: 'create → Ready p99', group, unit: 's', value: percentile(r.agent, 99), baseline: { label: 'CRI+CNI floor p99', value: f99 }, target: { op: '<=', value: f99 } },
      { name: 'create → Ready p50', group, unit: 's', value: percentile(r.agent, 50), baseline: { label: 'CRI+CNI floor p50', value: percentile(r.floor, 50) } },
    ];
  });
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/pod-startup needs root (containerd, network namespaces)');
  process.env.AGENT_IT = '1';
  // `--stages` reads the agent's spans through the API server's nodes/proxy, which refuses a
  // loopback node as kube-apiserver does: the agent then listens on this machine's own address.
  const nodeAddress = STAGES ? pickInternalIP() : undefined;
  if (nodeAddress === '127.0.0.1') throw new Error('--stages needs a non-loopback IPv4 address on this machine (the API server proxies no loopback node)');
  const h = await startHarness('bench', {}, 5, { inProcessAgent: false, ...(nodeAddress ? { nodeAddress } : {}) });
  // The harness's log level (warn) is kept: the figures are of the agent as it runs, not as a test reads it.
  const agent = await startNodeletProcess({
    name: 'nodelet agent',
    args: h.agentArgs,
    nodeArgs: AGENT_NODE_ARGS,
    ready: async () => (await h.api.get(NODES, h.nodeName).catch(() => undefined))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  }).catch(async (err: unknown) => {
    await h.stop().catch((e: unknown) => console.error(e));
    throw err;
  });
  try {
    for (const image of [h.rt.images.busybox, h.rt.images.pause]) await h.cri.image.pullImage({ image: { image } });
    const pid = agent.pid;
    const results: SizeResult[] = [];
    for (const n of SIZES) {
      const r = await runSize(h, pid, n);
      printSize(r);
      printStages(r);
      results.push(r);
    }
    const details = results.map((r) => ({ pods: r.n, agentSeconds: r.agent, floorSeconds: r.floor, idle: r.idle, busy: r.busy, burstCpuSeconds: r.cpu }));
    const written = writeBenchResults('pod-startup', figures(results), { details });
    console.log(`figures written to ${written.json}`);
  } finally {
    await h.stop().catch((err: unknown) => console.error(err));
    await agent.stop();
  }
}

await main();
