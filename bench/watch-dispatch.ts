// Watch-cache dispatch with one watcher per node (each kubelet's `spec.nodeName=<node>` pod
// watch): CPU per pod event with the cache's trigger index (watchers filed by node name, the
// default) and without it (every watcher handed every event and filtering it itself: the code
// before the index, and this run's baseline), at 100 and 1,000 watchers.
//
//   node --conditions=source --import tsx bench/watch-dispatch.ts [--watchers 100,1000] [--pods 200] [--rounds 5] [--svg]
//
// The real WatchCache and pod Registry, fed by a store whose watch replays prepared events (a
// pod's life: created unbound, bound, two status updates, deleted), so the CPU measured is the
// cache's decode and dispatch and the watchers' filtering, not a store's writes. Each watcher runs
// the compiled field selector the way the watch handler does (object now, previous object before).
// CPU time (process.cpuUsage) rather than wall time, median of the rounds, the two modes
// alternating; the deliveries and the events the watchers would send are counted too (the latter
// must be equal in both modes). Writes bench/results/watch-dispatch.json.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { noopLogger } from '@nodelet/base';
import { compileFilter } from '../control-plane/src/apiserver/filter.js';
import type { ApiObject } from '../control-plane/src/apiserver/object.js';
import { Registry } from '../control-plane/src/apiserver/registry.js';
import { findResource } from '../control-plane/src/apiserver/resources.js';
import { WatchCache } from '../control-plane/src/apiserver/watch-cache.js';
import type { KeyValue, Store, WatchEvent } from '../control-plane/src/storage/types.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';

const { values: args } = parseArgs({
  options: {
    watchers: { type: 'string', default: '100,1000' },
    pods: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    svg: { type: 'boolean', default: false },
  },
});
const sizes = args.watchers.split(',').map(Number);
const podCount = Number(args.pods);
const rounds = Number(args.rounds);
const def = findResource('', 'v1', 'pods')!;

/** The events of `podCount` pods' lives, spread over `nodes` nodes, as a store would deliver them. */
function podLives(registry: Registry, nodes: number): WatchEvent[] {
  const events: WatchEvent[] = [];
  let rev = 0;
  for (let i = 0; i < podCount; i++) {
    const key = registry.key('default', `p-${i}`);
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `p-${i}`, namespace: 'default', uid: `uid-${i}`, labels: { app: `d${i % 30}` }, creationTimestamp: '2026-12-05T00:00:00Z' },
      spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m', memory: '16Mi' } } }], schedulerName: 'default-scheduler' },
      status: { phase: 'Pending' },
    } as unknown as ApiObject & { spec: Record<string, unknown>; status: Record<string, unknown> };
    let created = 0;
    let prev: KeyValue | undefined;
    const put = (): void => {
      rev++;
      created ||= rev;
      const kv: KeyValue = { key, value: registry.encode(pod), createRevision: created, modRevision: rev };
      events.push({ type: 'PUT', kv, ...(prev ? { prevKv: prev } : {}), revision: rev, isCreate: !prev });
      prev = kv;
    };
    put();
    pod.spec.nodeName = `node-${i % nodes}`;
    put();
    pod.status = { phase: 'Running', podIP: `10.0.${i % 250}.${i % 200}` };
    put();
    pod.status = { ...pod.status, conditions: [{ type: 'Ready', status: 'True' }] };
    put();
    rev++;
    events.push({ type: 'DELETE', kv: prev!, prevKv: prev!, revision: rev, isCreate: false });
  }
  return events;
}

/** A store whose watch yields `events` once `go` resolves, then resolves `done`. */
function replayStore(events: WatchEvent[], go: Promise<void>, done: () => void): Store {
  const store: Partial<Store> = {
    currentRevision: async () => 0,
    compactedRevision: async () => 0,
    watch: async function* (_prefix, opts) {
      await go;
      for (const e of events) yield e;
      done();
      await new Promise<void>((resolve) => opts?.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  return store as Store;
}

interface Round {
  cpuMsPerEvent: number;
  deliveriesPerEvent: number;
  sent: number;
}

async function round(nodes: number, indexed: boolean): Promise<Round> {
  const registry = new Registry(def, undefined as unknown as Store);
  const events = podLives(registry, nodes);
  let start!: () => void;
  let finished!: () => void;
  const go = new Promise<void>((r) => (start = r));
  const done = new Promise<void>((r) => (finished = r));
  const cache = new WatchCache({ store: replayStore(events, go, finished), registry, logger: noopLogger, capacity: events.length });
  let deliveries = 0;
  let sent = 0;
  for (let n = 0; n < nodes; n++) {
    const selector = `spec.nodeName=node-${n}`;
    const filter = compileFilter(def, null, selector);
    await cache.subscribe(0, {
      onEvent: (e) => {
        deliveries++;
        const now = e.kind !== 'delete' && filter(e.object);
        const before = e.hasPrev && filter(e.prev!);
        if (now || before) sent++;
      },
      onEnd: () => undefined,
    }, indexed ? `node-${n}` : undefined);
  }
  const cpu = process.cpuUsage();
  start();
  await done;
  const used = process.cpuUsage(cpu);
  cache.close();
  return { cpuMsPerEvent: (used.user + used.system) / 1000 / events.length, deliveriesPerEvent: deliveries / events.length, sent };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures: BenchFigure[] = [];
const load = loadavg()[0]!.toFixed(1);
console.log(`watch-cache dispatch, ${podCount} pods × 5 events, ${rounds} rounds, load average ${load}`);
for (const nodes of sizes) {
  const byMode: Record<'indexed' | 'unindexed', Round[]> = { indexed: [], unindexed: [] };
  await round(nodes, true); // warm-up (JIT) for both paths
  await round(nodes, false);
  for (let r = 0; r < rounds; r++) {
    byMode.unindexed.push(await round(nodes, false));
    byMode.indexed.push(await round(nodes, true));
  }
  const sentIndexed = byMode.indexed[0]!.sent;
  const sentUnindexed = byMode.unindexed[0]!.sent;
  if (sentIndexed !== sentUnindexed) throw new Error(`watchers would send ${sentIndexed} events with the index, ${sentUnindexed} without`);
  const cpuIdx = median(byMode.indexed.map((r) => r.cpuMsPerEvent)) * 1000;
  const cpuAll = median(byMode.unindexed.map((r) => r.cpuMsPerEvent)) * 1000;
  const delIdx = byMode.indexed[0]!.deliveriesPerEvent;
  const delAll = byMode.unindexed[0]!.deliveriesPerEvent;
  console.log(
    `${nodes} watchers: CPU per event ${cpuIdx.toFixed(1)} µs indexed vs ${cpuAll.toFixed(1)} µs unindexed (${(cpuAll / cpuIdx).toFixed(1)}×); ` +
      `deliveries per event ${delIdx.toFixed(2)} vs ${delAll.toFixed(0)}; events the watchers send ${sentIndexed} in both`,
  );
  const group = `${nodes} watchers`;
  figures.push(
    { name: 'CPU per pod event', group, unit: 'µs', value: cpuIdx, baseline: { label: 'unindexed', value: cpuAll } },
    { name: 'watchers handed each event', group, unit: 'watchers', value: delIdx, baseline: { label: 'unindexed', value: delAll } },
  );
}
writeBenchResults('watch-dispatch', figures, { svg: args.svg });
