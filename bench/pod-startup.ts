/**
 * bench/pod-startup: bursts of 10, 30 and 60 pods (cached images) through the real path
 *
 *   API create ──▶ nodelet agent (child process) ──▶ CRI RunPodSandbox (CNI via nodelet-cni) +
 *   CreateContainer + StartContainer ──▶ status patch ──▶ Ready seen by a watch
 *
 * beside the floor: the same sandbox + CNI + container calls made directly through cri-client,
 * N at once, in the same run against the same containerd. Also samples the agent's RSS and CPU
 * while idle and with N running pods. Each size prints a met/missed line for the target (agent
 * p99 ≤ the floor's p99, issue #16) and the figures go to bench/results/pod-startup.json.
 *
 *   sudo flock /tmp/nodelet-itest.lock node --conditions=source --import tsx bench/pod-startup.ts [--sizes 10,30,60] [--svg waterfall.svg]
 *
 * `--svg <file>` draws the pod journeys (docs/tracing.md) of the largest burst's p50 and p99 pods,
 * from their traces, as waterfalls in one SVG picture.
 *
 * Needs root, containerd, runc and the CNI plugins (like the agent integration tests).
 */
import { join } from 'node:path';
import { PODS, NODES, type Pod } from '@nodelet/api';
import { startHarness, podSpec, type Harness } from '../agent/test/integration/harness.js';
import { buildContainerConfig, buildSandboxConfig } from '../agent/src/runtime/container-config.js';
import { MANAGED_BY } from '../agent/src/kubecontainer/labels.js';
import { pollUntil } from '@nodelet/base';
import { startNodeletProcess } from '@nodelet/base/testing';
import { writeFile } from 'node:fs/promises';
import { fetchPodTrace, renderWaterfallSvg, type SvgPanel } from '@nodelet/cli';
import { SPAN } from '@nodelet/api/tracing';
import { sampleProcess } from './lib/proc-sample.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { percentile, percentileIndex } from './lib/percentile.js';

const SIZES = parseSizes(process.argv);
const SVG = process.argv.includes('--svg') ? process.argv[process.argv.indexOf('--svg') + 1] : undefined;

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
    }, { timeoutMs: 10_000, intervalMs: 100 });
    panels.push({ title: `${label} pod ${name} (create → Ready seen by a watch ${seconds.toFixed(3)} s)`, waterfall: trace.waterfall });
  }
  await writeFile(file, renderWaterfallSvg(panels));
  console.log(`wrote ${file}: journeys of the p50 (${at(50)[0]}) and p99 (${at(99)[0]}) pods`);
}

async function floorBurst(h: Harness, N: number): Promise<number[]> {
  const rt = h.cri.runtime;
  const img = (await h.cri.image.imageStatus({ image: { image: h.rt.images.busybox } })).image!.id;
  const ids: string[] = [];
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
      const { containerId } = await rt.createContainer({ podSandboxId, config, sandboxConfig });
      await rt.startContainer({ containerId });
      return (performance.now() - t0) / 1000;
    }),
  );
  for (const id of ids) {
    await rt.stopPodSandbox({ podSandboxId: id });
    await rt.removePodSandbox({ podSandboxId: id });
  }
  return times;
}

/** What one size measured, in the shape of bench/lib/results.ts's figures. */
interface SizeResult {
  n: number;
  agent: number[];
  floor: number[];
  idle: { rssMiB: number; cpu: number };
  busy: { rssMiB: number; cpu: number };
}

/** One size: the agent's burst, its pods deleted, then the floor's burst of the same size. */
async function runSize(h: Harness, pid: number, n: number): Promise<SizeResult> {
  const idle = await sample(pid, 5000);
  const byPod = await agentBurst(h, n);
  const agent = [...byPod.values()];
  if (SVG && n === SIZES.at(-1)) await drawJourneys(h, byPod, SVG);
  const busy = await sample(pid, 5000);
  const pods = await h.api.list(PODS, { namespace: 'default' });
  await Promise.all(pods.items.map((p) => h.api.delete(PODS, p.metadata.name!, { namespace: 'default', gracePeriodSeconds: 1 })));
  await pollUntil('burst pods gone', async () => (await h.cri.runtime.listPodSandbox({})).items.length === 0, { timeoutMs: 120_000, intervalMs: 200 });
  await pollUntil('burst pods gone from the API', async () => (await h.api.list(PODS, { namespace: 'default' })).items.length === 0, { timeoutMs: 60_000, intervalMs: 200 });
  const floor = await floorBurst(h, n);
  return { n, agent, floor, idle, busy };
}

function printSize(r: SizeResult): void {
  const row = (name: string, xs: number[]) => `${name.padEnd(28)} p50 ${percentile(xs, 50).toFixed(3)} s   p99 ${percentile(xs, 99).toFixed(3)} s   max ${Math.max(...xs).toFixed(3)} s`;
  const [a99, f99] = [percentile(r.agent, 99), percentile(r.floor, 99)];
  console.log(`pod startup, ${r.n} pods at once, cached images (${new Date().toISOString()})`);
  console.log(row('API create → Ready (watch)', r.agent));
  console.log(row('floor: direct CRI+CNI calls', r.floor));
  console.log(`ratio p50 ${(percentile(r.agent, 50) / percentile(r.floor, 50)).toFixed(2)}×   p99 ${(a99 / f99).toFixed(2)}×`);
  console.log(`${r.n} pods: create → Ready p99 ≤ floor p99 (${f99.toFixed(3)} s): ${a99 <= f99 ? 'met' : 'missed'} (${a99.toFixed(3)} s, ${(a99 / f99).toFixed(2)}×)`);
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
  const h = await startHarness('bench', {}, 5, { inProcessAgent: false });
  // The harness's log level (warn) is kept: the figures are of the agent as it runs, not as a test reads it.
  const agent = await startNodeletProcess({
    name: 'nodelet agent',
    args: h.agentArgs,
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
      results.push(r);
    }
    const details = results.map((r) => ({ pods: r.n, agentSeconds: r.agent, floorSeconds: r.floor, idle: r.idle, busy: r.busy }));
    const written = writeBenchResults('pod-startup', figures(results), { details });
    console.log(`figures written to ${written.json}`);
  } finally {
    await h.stop().catch((err: unknown) => console.error(err));
    await agent.stop();
  }
}

await main();
