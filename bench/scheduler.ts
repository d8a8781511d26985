// Scheduler benchmark: N pending pods over M registered (agent-less) nodes, against the real
// in-process API server with SQLite in a temp dir. All pods exist before the scheduler starts,
// so the number is scheduling + binding throughput, not pod creation.
//
//   node --conditions=source --import tsx bench/scheduler.ts [--pods 1000] [--nodes 100] [--bind-concurrency 16] [--json]
//
// Prints pods/s (first binding to last, and scheduler start to last), the POST pods/binding
// round trip p50/p99, and queued→bound p50/p99 (which with a full queue is mostly waiting).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiClient, NODES, PODS, type Node, type Pod } from '@nodelet/api';
import { Semaphore, noopLogger } from '@nodelet/base';
import { startControlPlane } from '../control-plane/src/control-plane.js';
import { startScheduler, type BindTiming } from '../control-plane/src/scheduler/index.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '1000' },
    nodes: { type: 'string', default: '100' },
    'bind-concurrency': { type: 'string', default: '16' },
    json: { type: 'boolean', default: false },
  },
});
const PODS_N = Number(args.pods);
const NODES_N = Number(args.nodes);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

function node(i: number): Node {
  const now = new Date().toISOString();
  return {
    metadata: { name: `bench-node-${String(i).padStart(3, '0')}`, labels: { 'kubernetes.io/hostname': `bench-node-${i}` } },
    spec: {},
    status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
    },
  };
}

function pod(i: number): Pod {
  // Ten "deployments" of 100 so the owner-spreading score has work to do.
  const owner = `bench-rs-${i % 10}`;
  return {
    metadata: {
      name: `bench-pod-${String(i).padStart(4, '0')}`,
      namespace: 'default',
      labels: { app: owner },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `00000000-0000-0000-0000-00000000000${i % 10}`, controller: true }],
    },
    spec: { containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-scheduler-'));
  const cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  try {
    const sem = new Semaphore(16);
    await Promise.all(Array.from({ length: NODES_N }, (_, i) => sem.use(() => client.resource(NODES).create(node(i)))));
    const tc = performance.now();
    await Promise.all(Array.from({ length: PODS_N }, (_, i) => sem.use(() => client.resource(PODS, 'default').create(pod(i)))));
    const createMs = performance.now() - tc;

    const timings: BindTiming[] = [];
    let firstBound = 0;
    let lastBound = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const stop = new AbortController();
    const t0 = performance.now();
    const sched = await startScheduler({
      client,
      logger: noopLogger,
      signal: stop.signal,
      bindConcurrency: Number(args['bind-concurrency']),
      onBound: (_p, _n, t) => {
        const now = performance.now();
        if (timings.length === 0) firstBound = now;
        lastBound = now;
        timings.push(t);
        if (timings.length === PODS_N) resolveDone();
      },
    });
    const timeout = setTimeout(() => resolveDone(), 300_000);
    await done;
    clearTimeout(timeout);
    stop.abort();
    await sched.close();

    // Verify on the server, not just the callback.
    const list = await client.resource(PODS, 'default').listAll();
    const bound = list.items.filter((p) => p.spec?.nodeName).length;
    const perNode = new Map<string, number>();
    for (const p of list.items) if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    const spread = [Math.min(...perNode.values()), Math.max(...perNode.values())];
    const totalMs = lastBound - t0;
    const result = {
      pods: PODS_N,
      nodes: NODES_N,
      store: 'sqlite',
      podsCreatedPerSec: Math.round((PODS_N / createMs) * 1000),
      bound,
      podsPerSecSinceStart: Math.round((bound / totalMs) * 1000),
      podsPerSecFirstToLast: Math.round((bound / Math.max(1, lastBound - firstBound)) * 1000),
      bindCallP50Ms: Number(pct(timings.map((t) => t.bindCallMs), 50).toFixed(1)),
      bindCallP99Ms: Number(pct(timings.map((t) => t.bindCallMs), 99).toFixed(1)),
      queuedToBoundP50Ms: Math.round(pct(timings.map((t) => t.queuedToBoundMs), 50)),
      queuedToBoundP99Ms: Math.round(pct(timings.map((t) => t.queuedToBoundMs), 99)),
      podsPerNodeMinMax: spread,
    };
    if (args.json) console.log(JSON.stringify(result));
    else {
      console.log(`scheduler bench: ${PODS_N} pending pods, ${NODES_N} nodes, real API server + SQLite`);
      console.log(`  bound ${bound}/${PODS_N} in ${(totalMs / 1000).toFixed(2)} s: ${result.podsPerSecSinceStart} pods/s (${result.podsPerSecFirstToLast} pods/s first→last binding)`);
      console.log(`  POST pods/binding round trip: p50 ${result.bindCallP50Ms} ms, p99 ${result.bindCallP99Ms} ms`);
      console.log(`  queued→bound (whole backlog queued at start): p50 ${result.queuedToBoundP50Ms} ms, p99 ${result.queuedToBoundP99Ms} ms`);
      console.log(`  pods per node: min ${spread[0]}, max ${spread[1]}`);
    }
    if (bound !== PODS_N) process.exitCode = 1;
  } finally {
    client.close();
    await cp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
