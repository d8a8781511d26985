// Scheduler benchmark: 1,000 pending pods over 100 and over 1,000 agent-less nodes, on the real
// in-process API server with SQLite, the current scheduler beside the pre-change one (the
// baseline, from git) and beside the floor (bindings posted with no scheduling at all). Every
// run is a fresh process and a fresh database; runs are interleaved (sizes, then modes) so a
// change in the machine's load hits every mode alike; the table shows medians.
//
//   node --conditions=source --import tsx bench/scheduler.ts [--nodes 100,1000] [--pods 1000] [--runs 3]
//        [--modes legacy,new,floor] [--workloads plain,affinity] [--baseline-ref <commit>] [--bind-concurrency 16] [--svg] [--json]
//
// --workloads affinity adds a column "new+aff": the current scheduler on the same nodes and pods
// with zones, topology spread and pod (anti-)affinity in the mix (bench/scheduler-run.ts), run in
// the same interleaving as the plain workload so both see the same load.
//
// Writes bench/results/scheduler.json (bench/lib/results.ts; with --svg also scheduler.svg).
//
// Per size and mode: pods/s (scheduler start → last binding, informer sync included), the
// POST pods/binding round trip p50/p99, queued→bound p50/p99 (the whole backlog is queued at the
// start, so this is mostly waiting), the scheduling cycle p50/p99, process CPU per pod, how long
// the Scheduled events trail the last binding, and the spread (pods per node min/max).
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { BASELINE_REF, extractBaseline, type Baseline } from './scheduler-baseline.js';
import type { RunResult } from './scheduler-run.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    nodes: { type: 'string', default: '100,1000' },
    pods: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    modes: { type: 'string', default: 'legacy,new,floor' },
    workloads: { type: 'string', default: 'plain,affinity' },
    'baseline-ref': { type: 'string', default: BASELINE_REF },
    'bind-concurrency': { type: 'string', default: '16' },
    svg: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const SIZES = args.nodes.split(',').map(Number);
const RUNS = Number(args.runs);
let modes = args.modes.split(',') as Array<'legacy' | 'new' | 'floor'>;
const WORKLOADS = args.workloads.split(',') as Array<'plain' | 'affinity'>;
for (const w of WORKLOADS) if (w !== 'plain' && w !== 'affinity') throw new Error(`--workloads: plain and/or affinity, not ${w}`);
/** The affinity workload only means something to the current scheduler. */
const AFFINITY_COLUMN = 'new+aff';

/** Issue 16's targets. */
const TARGETS: Record<number, { podsPerSec: number; bindCallP99Ms?: number }> = { 100: { podsPerSec: 1000, bindCallP99Ms: 50 }, 1000: { podsPerSec: 500 } };
/** What issue 16 measured on the landed tree (another day, another load): shown when the baseline cannot run. */
const ISSUE_16 = { 100: { podsPerSec: 450, bindCallP99Ms: 423 }, 1000: { podsPerSec: 148, bindCallP99Ms: 4400, queuedToBoundP99Ms: 6600 } };

type Metric = Exclude<keyof RunResult, 'mode'>;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function runOnce(mode: string, nodes: number, baseline?: Baseline, workload: 'plain' | 'affinity' = 'plain'): RunResult {
  const argv = [
    ...process.execArgv,
    join(ROOT, 'bench/scheduler-run.ts'),
    '--mode', mode,
    '--workload', workload,
    '--nodes', String(nodes),
    '--pods', args.pods,
    '--bind-concurrency', args['bind-concurrency'],
    ...(mode === 'legacy' && baseline ? ['--module', baseline.module] : []),
  ];
  const out = execFileSync(process.execPath, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()!) as RunResult;
}

async function main(): Promise<void> {
  let baseline: Baseline | undefined;
  let baselineNote = `baseline: the scheduler at ${args['baseline-ref'].slice(0, 12)} (before the incremental snapshot and the separate binding cycle)`;
  if (modes.includes('legacy')) {
    try {
      baseline = extractBaseline(ROOT, args['baseline-ref']);
    } catch (err) {
      modes = modes.filter((m) => m !== 'legacy');
      baselineNote = `baseline could not be extracted from git (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); issue 16's numbers are shown instead`;
    }
  }
  const loadStart = loadavg();
  const runs: RunResult[] = [];
  try {
    for (let r = 0; r < RUNS; r++) {
      for (const n of SIZES) {
        const cells: Array<[string, 'plain' | 'affinity']> = [];
        if (WORKLOADS.includes('plain')) for (const m of modes) cells.push([m, 'plain']);
        if (WORKLOADS.includes('affinity')) cells.push(['new', 'affinity']);
        for (const [m, w] of cells) {
          const res = runOnce(m, n, baseline, w);
          runs.push(res);
          const label = w === 'affinity' ? AFFINITY_COLUMN : m;
          if (!args.json) console.error(`  run ${r + 1}/${RUNS} ${String(n).padStart(4)} nodes ${label.padEnd(7)} ${res.podsPerSec} pods/s, binding p99 ${res.bindCallP99Ms} ms, load ${res.loadavg1}`);
        }
      }
    }
  } finally {
    baseline?.dispose();
  }
  const loadEnd = loadavg();
  const metrics: Metric[] = [
    'podsPerSec', 'podsPerSecFirstToLast', 'startToFirstBindMs', 'bindCallP50Ms', 'bindCallP99Ms', 'queuedToBoundP50Ms', 'queuedToBoundP99Ms',
    'scheduleP50Us', 'scheduleP99Us', 'cpuMsPerPod', 'eventsTrailingMs', 'podsPerNodeMin', 'podsPerNodeMax', 'bound', 'loadavg1',
  ];
  const summary: Record<string, Record<string, Partial<Record<Metric, number>>>> = {};
  for (const n of SIZES) {
    summary[n] = {};
    const columns = [...(WORKLOADS.includes('plain') ? modes : []), ...(WORKLOADS.includes('affinity') ? [AFFINITY_COLUMN] : [])];
    for (const m of columns) {
      const mine = runs.filter((x) => x.nodes === n && (m === AFFINITY_COLUMN ? x.workload === 'affinity' : x.mode === m && (x.workload ?? 'plain') === 'plain'));
      const med: Partial<Record<Metric, number>> = {};
      for (const k of metrics) {
        const xs = mine.map((x) => x[k]).filter((v): v is number => typeof v === 'number');
        if (xs.length) med[k] = median(xs);
      }
      summary[n][m] = med;
    }
  }
  const report = {
    bench: 'scheduler',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavgStart: loadStart, loadavgEnd: loadEnd },
    pods: Number(args.pods),
    runsPerCell: RUNS,
    bindConcurrency: Number(args['bind-concurrency']),
    store: 'sqlite',
    baseline: baselineNote,
    targets: TARGETS,
    issue16: ISSUE_16,
    medians: summary,
    runs,
  };
  const written = writeBenchResults('scheduler', schedulerFigures(summary), { details: report, svg: args.svg });
  if (args.json) {
    console.log(JSON.stringify(report));
    return;
  }
  print(summary, loadStart, loadEnd, baselineNote);
  for (const line of written.targetLines) console.log(line);
  console.log(`\nwritten to ${written.json}${written.svg ? ` and ${written.svg}` : ''}`);
}

type Summary = Record<string, Record<string, Partial<Record<Metric, number>>>>;

/** The figures kept per size: the new scheduler's medians beside the pre-change one's, with issue 16's targets. */
function schedulerFigures(summary: Summary): BenchFigure[] {
  const out: BenchFigure[] = [];
  const rows: Array<[string, Metric, string, 'podsPerSec' | 'bindCallP99Ms' | undefined]> = [
    ['pods/s (start → last bind)', 'podsPerSec', 'pods/s', 'podsPerSec'],
    ['binding p99', 'bindCallP99Ms', 'ms', 'bindCallP99Ms'],
    ['queued → bound p99', 'queuedToBoundP99Ms', 'ms', undefined],
    ['CPU per pod', 'cpuMsPerPod', 'ms', undefined],
  ];
  for (const [n, modesAt] of Object.entries(summary)) {
    // Issue 23: the same throughput target with affinity and spread in the mix.
    const aff = modesAt[AFFINITY_COLUMN]?.podsPerSec;
    const affTarget = TARGETS[Number(n)]?.podsPerSec;
    if (aff !== undefined) {
      out.push({ group: `${n} nodes`, name: 'pods/s with affinity and spread', unit: 'pods/s', value: aff, ...(affTarget === undefined ? {} : { target: { op: '>=', value: affTarget } }) });
    }
    for (const [name, k, unit, targetKey] of rows) {
      const value = modesAt.new?.[k];
      if (value === undefined) continue;
      const legacy = modesAt.legacy?.[k];
      const target = targetKey ? TARGETS[Number(n)]?.[targetKey] : undefined;
      out.push({
        group: `${n} nodes`,
        name,
        unit,
        value,
        ...(legacy === undefined ? {} : { baseline: { label: 'before', value: legacy } }),
        ...(target === undefined ? {} : { target: { op: k === 'podsPerSec' ? '>=' : '<=', value: target } }),
      });
    }
  }
  return out;
}

function print(summary: Summary, loadStart: number[], loadEnd: number[], baselineNote: string): void {
  const la = (l: number[]): string => l.map((x) => x.toFixed(1)).join(' ');
  console.log(`\nscheduler bench: ${args.pods} pending pods, real API server + SQLite, bind concurrency ${args['bind-concurrency']}, median of ${RUNS} runs`);
  console.log(`machine: ${cpus().length} CPUs, load average ${la(loadStart)} at the start, ${la(loadEnd)} at the end`);
  console.log(baselineNote);
  console.log('floor: POST pods/binding for every pod with no scheduling (and no events) — what the API server allows\n');
  const rows: Array<[string, Metric, (n: number) => string]> = [
    ['pods/s (start → last bind)', 'podsPerSec', (n) => `≥ ${TARGETS[n]?.podsPerSec ?? '-'}`],
    ['pods/s (first → last bind)', 'podsPerSecFirstToLast', () => ''],
    ['start → first bind ms', 'startToFirstBindMs', () => ''],
    ['binding p50 ms', 'bindCallP50Ms', () => ''],
    ['binding p99 ms', 'bindCallP99Ms', (n) => (TARGETS[n]?.bindCallP99Ms ? `≤ ${TARGETS[n]!.bindCallP99Ms}` : '')],
    ['queued→bound p50 ms', 'queuedToBoundP50Ms', () => ''],
    ['queued→bound p99 ms', 'queuedToBoundP99Ms', () => ''],
    ['scheduling cycle p50 µs', 'scheduleP50Us', () => ''],
    ['scheduling cycle p99 µs', 'scheduleP99Us', () => ''],
    ['CPU ms per pod (process)', 'cpuMsPerPod', () => ''],
    ['events trail last bind ms', 'eventsTrailingMs', () => ''],
    ['pods per node min', 'podsPerNodeMin', () => ''],
    ['pods per node max', 'podsPerNodeMax', () => ''],
  ];
  for (const n of SIZES) {
    const cols = Object.keys(summary[n] ?? {});
    console.log(`${n} nodes`.padEnd(28) + cols.map((c) => c.padStart(10)).join('') + 'target'.padStart(10) + (ISSUE_16[n as 100 | 1000] ? 'issue 16'.padStart(10) : ''));
    for (const [label, k, target] of rows) {
      const cells = cols.map((c) => {
        const v = summary[n]![c]![k];
        return (v === undefined ? '-' : String(Math.round(v * 10) / 10)).padStart(10);
      });
      const issue = (ISSUE_16 as Record<number, Partial<Record<Metric, number>>>)[n]?.[k];
      console.log(`  ${label}`.padEnd(28) + cells.join('') + target(n).padStart(10) + (issue !== undefined ? String(issue).padStart(10) : ''));
    }
    console.log('');
  }
}

await main();
