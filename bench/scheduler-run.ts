// One run of the scheduler benchmark, in a process of its own (bench/scheduler.ts starts it):
// N pending pods over M agent-less nodes against the real in-process API server with SQLite in a
// temp dir. All pods exist before the scheduler starts, so the numbers are scheduling + binding,
// not pod creation. Prints one JSON line.
//
//   mode new     the scheduler in control-plane/src/scheduler
//   mode legacy  the scheduler module at --module (a git checkout of the pre-change code)
//   mode floor   no scheduler: POST pods/binding for every pod, round robin over the nodes, with
//                the same concurrency — what the API server allows, the ceiling for any scheduler
//
//   --workload plain     pods with requests and an owner (the default)
//   --workload affinity  the same mix with affinity and spread: zones on the nodes; of ten
//                        deployments, four spread over zones (DoNotSchedule, maxSkew 1) and hosts
//                        (ScheduleAnyway), three have a Service (system default spreading) and
//                        preferred host anti-affinity, two required host anti-affinity, one
//                        required zone affinity to another deployment
//   --cpu-prof <file>  writes a V8 CPU profile of the scheduling phase alone (not the setup)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiClient, EVENTS, NODES, PODS, SERVICES, type Node, type Pod, type PodSpec } from '@nodelet/api';
import { Semaphore, noopLogger, type Logger } from '@nodelet/base';
import { startControlPlane } from '../control-plane/src/control-plane.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string', default: 'new' },
    module: { type: 'string' },
    pods: { type: 'string', default: '1000' },
    nodes: { type: 'string', default: '100' },
    'bind-concurrency': { type: 'string', default: '16' },
    workload: { type: 'string', default: 'plain' },
    'cpu-prof': { type: 'string' },
  },
});
const WORKLOAD = args.workload as 'plain' | 'affinity';
if (WORKLOAD !== 'plain' && WORKLOAD !== 'affinity') throw new Error(`--workload: plain or affinity, not ${String(args.workload)}`);
const ZONES = 10;
const MODE = args.mode as 'new' | 'legacy' | 'floor';
const PODS_N = Number(args.pods);
const NODES_N = Number(args.nodes);
const BIND_CONCURRENCY = Number(args['bind-concurrency']);
const EVENTS_WAIT_MS = 120_000;

/** What a scheduler module's `startScheduler` takes and reports (the same before and after the change). */
interface Timing {
  queuedToBoundMs: number;
  bindCallMs: number;
  scheduleMs?: number;
}
type StartScheduler = (o: {
  client: unknown;
  logger: Logger;
  signal: AbortSignal;
  bindConcurrency?: number;
  onBound?: (pod: Pod, node: string, t: Timing) => void;
}) => Promise<{ close(): Promise<void> }>;

export interface RunResult {
  mode: string;
  workload?: string;
  pods: number;
  nodes: number;
  bound: number;
  /** Bound pods per second from the scheduler's start (informer sync included) to the last binding. */
  podsPerSec: number;
  podsPerSecFirstToLast: number;
  startToFirstBindMs: number;
  bindCallP50Ms: number;
  bindCallP99Ms: number;
  queuedToBoundP50Ms: number;
  queuedToBoundP99Ms: number;
  /** The scheduling cycle (filter, score, assume) per pod, when the scheduler reports it. */
  scheduleP50Us?: number;
  scheduleP99Us?: number;
  /** CPU of the whole process (API server included) from the scheduler's start to the last binding, per pod. */
  cpuMsPerPod: number;
  /** The same until the last Scheduled event was written (the event polling adds a little). */
  cpuMsPerPodWithEvents: number;
  /** From the last binding until every Scheduled event was written; -1 when they did not all arrive. */
  eventsTrailingMs: number;
  podsPerNodeMin: number;
  podsPerNodeMax: number;
  loadavg1: number;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

function node(i: number): Node {
  const now = new Date().toISOString();
  return {
    metadata: {
      name: `bench-node-${String(i).padStart(4, '0')}`,
      labels: { 'kubernetes.io/hostname': `bench-node-${i}`, ...(WORKLOAD === 'affinity' ? { 'topology.kubernetes.io/zone': `bench-zone-${i % ZONES}` } : {}) },
    },
    spec: {},
    status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
    },
  };
}

function pod(i: number): Pod {
  // Ten "deployments" so the owner-spreading score has work to do.
  const owner = `bench-rs-${i % 10}`;
  return {
    metadata: {
      name: `bench-pod-${String(i).padStart(5, '0')}`,
      namespace: 'default',
      labels: { app: owner },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `00000000-0000-0000-0000-00000000000${i % 10}`, controller: true }],
    },
    spec: { containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...(WORKLOAD === 'affinity' ? affinitySpec(i % 10) : {}) },
  };
}

const sel = (app: string) => ({ matchLabels: { app } });
const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

/** The affinity workload's scheduling constraints for deployment `k` (see the header). */
function affinitySpec(k: number): Partial<PodSpec> {
  const app = `bench-rs-${k}`;
  if (k <= 3) {
    return {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: sel(app) },
        { maxSkew: 1, topologyKey: HOST, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: sel(app) },
      ],
    };
  }
  if (k <= 6) return { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: sel(app), topologyKey: HOST } }] } } };
  if (k <= 8) return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: sel(app), topologyKey: HOST }] } } };
  return { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: sel('bench-rs-0'), topologyKey: ZONE }] } } };
}

async function loadScheduler(): Promise<StartScheduler> {
  const url = MODE === 'legacy' ? pathToFileURL(args.module ?? '').href : new URL('../control-plane/src/scheduler/index.js', import.meta.url).href;
  const mod = (await import(url)) as { startScheduler: StartScheduler };
  return mod.startScheduler;
}

/** The floor: bind every pod with no scheduling at all. */
async function bindDirectly(client: ApiClient, names: string[], nodes: string[], onBound: (t: Timing) => void): Promise<void> {
  const sem = new Semaphore(BIND_CONCURRENCY);
  const t0 = performance.now();
  await Promise.all(
    names.map((name, i) =>
      sem.use(async () => {
        const started = performance.now();
        await client.create(
          PODS,
          { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace: 'default' }, target: { apiVersion: 'v1', kind: 'Node', name: nodes[i % nodes.length]! } },
          { namespace: 'default', name, subresource: 'binding' },
        );
        const end = performance.now();
        onBound({ bindCallMs: end - started, queuedToBoundMs: end - t0 });
      }),
    ),
  );
}

async function main(): Promise<RunResult> {
  const startScheduler = MODE === 'floor' ? undefined : await loadScheduler();
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-scheduler-'));
  const cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  try {
    const sem = new Semaphore(16);
    const nodes = await Promise.all(Array.from({ length: NODES_N }, (_, i) => sem.use(() => client.resource(NODES).create(node(i)))));
    if (WORKLOAD === 'affinity') {
      // Services for deployments 4–6, so their pods get the system default spread constraints.
      for (const k of [4, 5, 6]) await client.resource(SERVICES, 'default').create({ metadata: { name: `bench-svc-${k}` }, spec: { selector: { app: `bench-rs-${k}` }, ports: [{ port: 80 }] } });
    }
    const pods = await Promise.all(Array.from({ length: PODS_N }, (_, i) => sem.use(() => client.resource(PODS, 'default').create(pod(i)))));

    const timings: Timing[] = [];
    let firstBound = 0;
    let lastBound = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const onBound = (t: Timing): void => {
      const now = performance.now();
      if (timings.length === 0) firstBound = now;
      lastBound = now;
      timings.push(t);
      if (timings.length === PODS_N) resolveDone();
    };
    const stop = new AbortController();
    const profiler = args['cpu-prof'] ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let sched: { close(): Promise<void> } | undefined;
    if (startScheduler) {
      sched = await startScheduler({ client, logger: noopLogger, signal: stop.signal, bindConcurrency: BIND_CONCURRENCY, onBound: (_p, _n, t) => onBound(t) });
    } else {
      void bindDirectly(client, pods.map((p) => p.metadata.name ?? ''), nodes.map((n) => n.metadata.name ?? ''), onBound);
    }
    const timeout = setTimeout(() => resolveDone(), 600_000);
    await done;
    clearTimeout(timeout);
    const cpu = process.cpuUsage(cpu0);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(args['cpu-prof']!, JSON.stringify(profile));
      profiler.disconnect();
    }

    // The scheduler's events trail its bindings; wait for them before stopping it.
    let eventsTrailingMs = 0;
    let cpuWithEvents = cpu;
    if (sched) {
      eventsTrailingMs = -1;
      for (const deadline = performance.now() + EVENTS_WAIT_MS; performance.now() < deadline; ) {
        const evs = await client.resource(EVENTS, 'default').listAll();
        if (evs.items.filter((e) => e.reason === 'Scheduled').length >= PODS_N) {
          eventsTrailingMs = Math.round(performance.now() - lastBound);
          cpuWithEvents = process.cpuUsage(cpu0);
          break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    stop.abort();
    await sched?.close();

    // Verify on the server, not just the callback.
    const list = await client.resource(PODS, 'default').listAll();
    const perNode = new Map<string, number>(nodes.map((n) => [n.metadata.name ?? '', 0]));
    let bound = 0;
    for (const p of list.items) {
      if (!p.spec?.nodeName) continue;
      bound++;
      perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    }
    const schedule = timings.map((t) => t.scheduleMs).filter((x): x is number => x !== undefined);
    return {
      mode: MODE,
      workload: WORKLOAD,
      pods: PODS_N,
      nodes: NODES_N,
      bound,
      podsPerSec: Math.round((bound / (lastBound - t0)) * 1000),
      podsPerSecFirstToLast: Math.round((bound / Math.max(1, lastBound - firstBound)) * 1000),
      startToFirstBindMs: Math.round(firstBound - t0),
      bindCallP50Ms: round1(percentile(timings.map((t) => t.bindCallMs), 50)),
      bindCallP99Ms: round1(percentile(timings.map((t) => t.bindCallMs), 99)),
      queuedToBoundP50Ms: Math.round(percentile(timings.map((t) => t.queuedToBoundMs), 50)),
      queuedToBoundP99Ms: Math.round(percentile(timings.map((t) => t.queuedToBoundMs), 99)),
      ...(schedule.length ? { scheduleP50Us: Math.round(percentile(schedule, 50) * 1000), scheduleP99Us: Math.round(percentile(schedule, 99) * 1000) } : {}),
      cpuMsPerPod: Number(((cpu.user + cpu.system) / 1000 / PODS_N).toFixed(2)),
      cpuMsPerPodWithEvents: Number(((cpuWithEvents.user + cpuWithEvents.system) / 1000 / PODS_N).toFixed(2)),
      eventsTrailingMs,
      podsPerNodeMin: Math.min(...perNode.values()),
      podsPerNodeMax: Math.max(...perNode.values()),
      loadavg1: Number(loadavg()[0]!.toFixed(2)),
    };
  } finally {
    client.close();
    await cp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = await main();
console.log(JSON.stringify(result));
if (result.bound !== PODS_N) process.exitCode = 1;
