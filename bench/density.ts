/**
 * bench/density: the control plane at scale with hollow nodes (docs/hollow-nodes.md).
 *
 *   node --conditions=source --import tsx bench/density.ts [--nodes 100] [--deployments 30] [--replicas 100]
 *        [--store sqlite|etcd|both] [--workload plain|spread] [--qps N] [--count-writes] [--server-cpu-prof DIR]
 *        [--svg] [--source] [--timeout 300]
 *
 * Per store, a baseline run (10 nodes, 3 Deployments of 100) then the measured size (default 100
 * nodes, 30 Deployments of 100 = 3,000 pods), each on a fresh `nodelet server` and a fresh
 * `nodelet hollow` (bench/density-run.ts). `--workload spread` gives half the Deployments a
 * topology spread constraint and half required pod anti-affinity (both on the hostname; replicas
 * ≤ nodes) and counts the Deployments whose placement breaks its rule. Prints create → Running p50/p99 with the pod-startup
 * SLO line, scheduler throughput, API server RSS and CPU, watch fan-out and lease renewals, each
 * beside the baseline, and the wall time. Runs the built dist (`npx tsc -b` first) unless
 * --source. Writes bench/results/density.json (and .svg with --svg).
 *
 * `--qps N` creates the pods as Pod objects at a steady N a second instead (kube's density SLO:
 * p99 create → Running ≤ 5 s per pod at a steady rate), baseline and measured run alike, and
 * prints the rate achieved; `--count-writes` counts the API writes of the measured window from the
 * server's audit log (bench/density-writes.ts) and prints them per pod; `--server-cpu-prof DIR`
 * writes each server process's V8 CPU profile there (node --cpu-prof, at the server's exit).
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { densityRun, type RunResult, type RunSpec } from './density-run.js';
import type { Workload } from './lib/placement.js';
import { writesTable } from './density-writes.js';
import { stagesTable } from './density-stages.js';

const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '100' },
    deployments: { type: 'string', default: '30' },
    replicas: { type: 'string', default: '100' },
    store: { type: 'string', default: 'both' },
    workload: { type: 'string', default: 'plain' },
    svg: { type: 'boolean', default: false },
    source: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '300' },
    'no-baseline': { type: 'boolean', default: false },
    qps: { type: 'string' },
    'count-writes': { type: 'boolean', default: false },
    'server-cpu-prof': { type: 'string' },
  },
});

const BASELINE = { nodes: 10, deployments: 3, replicas: 100 };
const SLO_P99_S = 5;

function positive(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1, got "${v}"`);
  return n;
}

function stores(v: string): Array<'sqlite' | 'etcd'> {
  if (v === 'both') return ['sqlite', 'etcd'];
  if (v === 'sqlite' || v === 'etcd') return [v];
  throw new Error(`--store must be sqlite, etcd or both, got "${v}"`);
}

function workload(v: string): Workload {
  if (v === 'plain' || v === 'spread') return v;
  throw new Error(`--workload must be plain or spread, got "${v}"`);
}

const fmt = (n: number, d = 2): string => (n === Infinity ? 'never' : Number.isFinite(n) ? n.toFixed(d) : '-');

function sloLine(r: RunResult): string {
  const why = r.running < r.pods ? `; ${r.pods - r.running} pods not Running after ${r.timeoutMs / 1000} s` : '';
  return `SLO pod startup p99 ≤ ${SLO_P99_S} s: ${r.startupP99S <= SLO_P99_S ? 'met' : 'missed'} (p99 ${fmt(r.startupP99S)} s${why})`;
}

const ROWS: Array<[string, (r: RunResult) => string]> = [
  ['pods Running', (r) => `${r.running}/${r.pods}`],
  ['pods created/s (achieved)', (r) => fmt(r.createdPerSec, 1)],
  ['create → Running p50 (s, creationTimestamp)', (r) => fmt(r.startupP50S)],
  ['create → Running p90 (s, creationTimestamp)', (r) => fmt(r.startupP90S)],
  ['create → Running p99 (s, creationTimestamp)', (r) => fmt(r.startupP99S)],
  ['seen → Running p50/p99 (s, watch-precise)', (r) => `${fmt(r.preciseP50S)} / ${fmt(r.preciseP99S)}`],
  ['seen → bound p50/p99 (s)', (r) => `${fmt(r.boundP50S)} / ${fmt(r.boundP99S)}`],
  ['scheduler pods bound/s', (r) => fmt(r.podsBoundPerSec, 0)],
  ['first create → all Running (s)', (r) => fmt(r.burstS, 1)],
  ['nodes start → Ready (s)', (r) => fmt(r.nodesReadyS, 1)],
  ['API server RSS peak / end (MiB)', (r) => `${fmt(r.serverRssPeakMiB, 0)} / ${fmt(r.serverRssEndMiB, 0)}`],
  ['API server CPU burst / whole run (s)', (r) => `${fmt(r.serverCpuBurstS, 1)} / ${fmt(r.serverCpuTotalS, 1)}`],
  ['server main thread CPU burst (s, % of the burst)', (r) => `${fmt(r.serverMainCpuBurstS, 1)} (${fmt((100 * r.serverMainCpuBurstS) / r.burstS, 0)} %)`],
  [`machine CPU burst (s, % of ${cpus().length} cores)`, (r) => `${fmt(r.machineCpuBurstS, 1)} (${fmt((100 * r.machineCpuBurstS) / (r.burstS * cpus().length), 0)} %)`],
  ['server connections (peak)', (r) => String(r.serverConnections)],
  ['connections opened in the burst (per pod)', (r) => `${r.connectionsOpened} (${fmt(r.connectionsOpened / r.pods)})`],
  ['accept queue peak / listen overflows (machine)', (r) => `${r.acceptQueuePeak} / ${r.listenOverflows}`],
  ['hollow process RSS peak (MiB) / CPU burst (s)', (r) => `${fmt(r.hollowRssPeakMiB, 0)} / ${fmt(r.hollowCpuBurstS, 1)}`],
  ['hollow watches open', (r) => String(r.hollowWatchesOpen)],
  ['watch events to hollow nodes (burst)', (r) => String(r.hollowWatchEvents)],
  ['lease renewals/s', (r) => fmt(r.leaseRenewalsPerSec, 1)],
  ['placement rule violations (Deployments)', (r) => (r.workload === 'plain' ? '-' : String(r.placementViolations))],
  ['run wall time (s)', (r) => fmt(r.wallS, 0)],
];

function table(runs: RunResult[]): string {
  const head = ['', ...runs.map((r) => `${r.store} ${r.workload} ${r.nodes}n×${r.pods}p${r.qps ? ` @${r.qps}/s` : ''}`)];
  const rows = [head, ...ROWS.map(([label, f]) => [label, ...runs.map(f)])];
  const w = head.map((_h, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ')).join('\n');
}

function figures(main: RunResult, base: RunResult | undefined): BenchFigure[] {
  const group = `${main.store}${main.workload === 'plain' ? '' : ` ${main.workload}`}, ${main.nodes} nodes × ${main.pods} pods${main.qps ? ` at ${main.qps}/s` : ''}`;
  const b = (v: (r: RunResult) => number) => (base ? { baseline: { label: `${base.nodes} nodes × ${base.pods} pods`, value: v(base) } } : {});
  // A pod that never ran (timed out) has no finite time: the figure shows the deadline, a lower bound.
  const finite = (v: (r: RunResult) => number) => (r: RunResult): number => (Number.isFinite(v(r)) ? v(r) : r.timeoutMs / 1000);
  const f = (name: string, unit: string, v: (r: RunResult) => number, extra: Partial<BenchFigure> = {}): BenchFigure => ({ name, group, unit, value: finite(v)(main), ...b(finite(v)), ...extra });
  return [
    f('pods created/s', 'pods/s', (r) => r.createdPerSec),
    f('create → Running p50', 's', (r) => r.startupP50S),
    f('create → Running p90', 's', (r) => r.startupP90S),
    f('create → Running p99', 's', (r) => r.startupP99S, { target: { op: '<=', value: SLO_P99_S } }),
    f('scheduler throughput', 'pods/s', (r) => r.podsBoundPerSec),
    f('API server RSS peak', 'MiB', (r) => r.serverRssPeakMiB),
    f('API server RSS end', 'MiB', (r) => r.serverRssEndMiB),
    f('API server CPU (burst)', 's', (r) => r.serverCpuBurstS),
    f('watches open (hollow nodes)', 'watches', (r) => r.hollowWatchesOpen),
    f('watch events to nodes (burst)', 'events', (r) => r.hollowWatchEvents),
    f('lease renewals', '/s', (r) => r.leaseRenewalsPerSec),
  ];
}

/** One line per finished run, printed at once so a long bench shows its figures as it goes. */
function runLine(r: RunResult): string {
  const rule = r.workload === 'plain' ? '' : `, ${r.placementViolations} Deployments breaking their placement rule`;
  return `${r.store} ${r.workload} ${r.nodes} nodes × ${r.pods} pods${r.qps ? ` at ${r.qps}/s (achieved ${fmt(r.createdPerSec, 1)}/s)` : ''}: Running ${r.running}/${r.pods}${rule}, ` +
    `create → Running p50 ${fmt(r.startupP50S)} s p90 ${fmt(r.startupP90S)} s p99 ${fmt(r.startupP99S)} s, ` +
    `${fmt(r.podsBoundPerSec, 0)} pods bound/s, server RSS ${fmt(r.serverRssPeakMiB, 0)}/${fmt(r.serverRssEndMiB, 0)} MiB, CPU ${fmt(r.serverCpuBurstS, 1)} s, ` +
    `${r.hollowWatchesOpen} watches, ${r.hollowWatchEvents} events, ${fmt(r.leaseRenewalsPerSec, 1)} renewals/s; ${sloLine(r)}`;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const size = { nodes: positive('nodes', args.nodes), deployments: positive('deployments', args.deployments), replicas: positive('replicas', args.replicas) };
  const common = {
    source: args.source, timeoutMs: positive('timeout', args.timeout) * 1000, workload: workload(args.workload), countWrites: args['count-writes'],
    ...(args.qps !== undefined ? { qps: positive('qps', args.qps) } : {}),
    ...(args['server-cpu-prof'] ? { serverCpuProf: args['server-cpu-prof'] } : {}),
  };
  // Required anti-affinity on the hostname runs at most one replica a node.
  if (common.workload === 'spread' && size.replicas > size.nodes) throw new Error(`--workload spread needs --replicas ≤ --nodes (anti-affinity: one replica a node), got ${size.replicas} > ${size.nodes}`);
  const baseline = common.workload === 'spread' ? { ...BASELINE, replicas: Math.min(BASELINE.replicas, BASELINE.nodes) } : BASELINE;
  const log = (m: string): void => void process.stderr.write(`${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s  ${m}\n`);
  // Ctrl-C/SIGTERM ends the current run through its cleanup: servers, hollow nodes and etcd stopped by PID.
  const interrupted = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => interrupted.abort(new Error(`interrupted by ${sig}`)));
  const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
  const runs: RunResult[] = [];
  const pairs: Array<{ main: RunResult; base?: RunResult }> = [];
  for (const store of stores(args.store)) {
    let base: RunResult | undefined;
    if (!args['no-baseline']) {
      const spec: RunSpec = { store, ...baseline, ...common };
      log(`${store}: baseline ${spec.nodes} nodes, ${spec.deployments}×${spec.replicas} pods`);
      runs.push((base = await densityRun(spec, (m) => log(`${store} baseline: ${m}`), interrupted.signal)));
      log(runLine(base));
    }
    const spec: RunSpec = { store, ...size, ...common };
    log(`${store}: ${spec.nodes} nodes, ${spec.deployments}×${spec.replicas} pods`);
    const main = await densityRun(spec, (m) => log(`${store}: ${m}`), interrupted.signal);
    runs.push(main);
    pairs.push({ main, base });
    log(runLine(main));
  }
  const wallS = (performance.now() - t0) / 1000;
  console.log(`\nbench/density (${args.source ? 'TypeScript sources' : 'built dist'}; hollow nodes: real agent over a fake CRI, docs/hollow-nodes.md; load average at the start ${load0})\n`);
  console.log(table(runs));
  console.log('');
  for (const r of runs) console.log(`${r.store} ${r.nodes} nodes × ${r.pods} pods${r.qps ? ` at ${r.qps}/s` : ' at once'}: ${sloLine(r)}`);
  for (const r of runs) console.log(`\nWhere the pods waited, ${r.store} ${r.nodes} nodes × ${r.pods} pods${r.qps ? ` at ${r.qps}/s` : ' at once'} (watch-precise; bench/density-stages.ts):\n${stagesTable(r.stages)}`);
  for (const r of runs) if (r.writes) console.log(`\nAPI writes, ${r.store} ${r.nodes} nodes × ${r.pods} pods${r.qps ? ` at ${r.qps}/s` : ' at once'} (first create → all Running; leases apart):\n${writesTable(r.writes, r.pods)}`);
  const name = ['density', ...(common.workload === 'plain' ? [] : [common.workload]), ...(common.qps ? ['qps'] : [])].join('-');
  const { json, svg } = writeBenchResults(name, pairs.flatMap((p) => figures(p.main, p.base)), { details: { runs, wallS }, svg: args.svg });
  console.log(`\nwall time ${fmt(wallS, 0)} s (${(wallS / 60).toFixed(1)} min); results: ${json}${svg ? `, ${svg}` : ''}`);
}

await main();
