// Storage floor benchmark: the same workload on the SQLite and etcd stores, side by side.
// bench/apiserver (the API-level bench) sits on top of these numbers.
//
//   node --conditions=source --import tsx bench/apiserver-storage.ts [--keys 1000] [--watchers 100] [--json]
//
// 1. creates of N pod-sized values, 16 concurrent: per-op p50/p99 and throughput
// 2. list of the N keys (whole prefix, and in pages of 500): p50/p99
// 3. watch fan-out: W watchers on the prefix, sequential updates; latency from the write call
//    to each watcher receiving the event, p50/p99 over all deliveries
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEtcdStore, createSqliteStore, type Store } from '../control-plane/src/storage/index.js';
import { etcdUnavailableReason, startTestEtcd } from '../control-plane/src/storage/testing/etcd.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '16' },
    watchers: { type: 'string', default: '100' },
    events: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const KEYS = Number(args.keys);
const CONCURRENCY = Number(args.concurrency);
const WATCHERS = Number(args.watchers);
const EVENTS = Number(args.events);
const PREFIX = '/registry/pods/bench/';

interface Stats {
  p50: number;
  p99: number;
  max: number;
  n: number;
}
type Result = Record<string, Stats | number | string>;

function stats(samples: number[]): Stats {
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: percentile(samples, 100), n: samples.length };
}

/** A pod-like JSON value of about 1.2 KiB, as the API server would store it. */
function podValue(i: number, generation = 1): Uint8Array {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: 'bench', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, generation, labels: { app: 'bench', shard: String(i % 16) } },
    spec: { nodeName: `node-${i % 8}`, containers: [{ name: 'main', image: 'busybox:latest', command: ['sleep', '3600'], resources: { requests: { cpu: '10m', memory: '16Mi' } } }], restartPolicy: 'Always', terminationGracePeriodSeconds: 30 },
    status: { phase: 'Running', podIP: `10.88.${(i >> 8) & 255}.${i & 255}`, conditions: [{ type: 'Ready', status: 'True' }], pad: 'x'.repeat(600) },
  };
  return Buffer.from(JSON.stringify(pod));
}

async function benchCreates(store: Store): Promise<{ lat: Stats; opsPerSec: number }> {
  const lat: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < KEYS; i = next++) {
        const t0 = performance.now();
        await store.create(`${PREFIX}pod-${String(i).padStart(5, '0')}`, podValue(i));
        lat.push(performance.now() - t0);
      }
    }),
  );
  return { lat: stats(lat), opsPerSec: KEYS / ((performance.now() - started) / 1000) };
}

async function benchList(store: Store, rounds = 20): Promise<{ full: Stats; paged: Stats }> {
  const full: number[] = [];
  const paged: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    const all = await store.list(PREFIX);
    full.push(performance.now() - t0);
    if (all.items.length !== KEYS) throw new Error(`list returned ${all.items.length} keys, expected ${KEYS}`);
    t0 = performance.now();
    let page = await store.list(PREFIX, { limit: 500 });
    let n = page.items.length;
    while (page.more) {
      page = await store.list(PREFIX, { limit: 500, revision: page.revision, startAfter: page.items.at(-1)!.key });
      n += page.items.length;
    }
    paged.push(performance.now() - t0);
    if (n !== KEYS) throw new Error(`paged list returned ${n} keys, expected ${KEYS}`);
  }
  return { full: stats(full), paged: stats(paged) };
}

async function benchFanOut(store: Store): Promise<{ delivery: Stats; lastWatcher: Stats }> {
  const ac = new AbortController();
  setMaxListeners(2 * WATCHERS + 10, ac.signal); // one shared signal for all watchers of the bench
  const sentAt = new Map<number, number>(); // revision -> write start
  const perEvent = new Map<number, number[]>();
  const after = await store.currentRevision();
  let delivered = 0;
  let onDelivered: (() => void) | undefined;
  const loops = Array.from({ length: WATCHERS }, async () => {
    for await (const ev of store.watch(PREFIX, { afterRevision: after, signal: ac.signal })) {
      const now = performance.now();
      const list = perEvent.get(ev.revision) ?? [];
      list.push(now);
      perEvent.set(ev.revision, list);
      delivered++;
      onDelivered?.();
    }
  });
  let kv = await store.get(`${PREFIX}pod-00000`);
  // Round 0 is a warm-up that every watcher must receive (etcd attaches watches asynchronously);
  // it is not measured.
  for (let g = 0; g <= EVENTS; g++) {
    const target = delivered + WATCHERS;
    const done = new Promise<void>((resolve) => (onDelivered = () => delivered >= target && resolve()));
    const t0 = performance.now();
    const rev = await store.update(kv!.key, podValue(0, g + 2), kv!.modRevision);
    if (g > 0) sentAt.set(rev, t0);
    kv = { ...kv!, modRevision: rev };
    await done;
  }
  ac.abort();
  await Promise.all(loops);
  const all: number[] = [];
  const last: number[] = [];
  for (const [rev, t0] of sentAt) {
    const times = (perEvent.get(rev) ?? []).map((t) => t - t0);
    all.push(...times);
    last.push(Math.max(...times));
  }
  return { delivery: stats(all), lastWatcher: stats(last) };
}

async function runBackend(name: string, store: Store): Promise<Result> {
  try {
    const creates = await benchCreates(store);
    const list = await benchList(store);
    const fan = await benchFanOut(store);
    return { backend: name, create: creates.lat, createsPerSec: Math.round(creates.opsPerSec), list: list.full, listPaged500: list.paged, watchDelivery: fan.delivery, watchLastOf: fan.lastWatcher };
  } finally {
    await store.close();
  }
}

const fmt = (s: Stats | number | string | undefined): string =>
  typeof s === 'object' ? `${s.p50.toFixed(2)} / ${s.p99.toFixed(2)}` : String(s ?? '—');

const results: Result[] = [];
const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-storage-'));
try {
  results.push(await runBackend('sqlite', createSqliteStore({ path: join(dir, 'state.db') })));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const skip = etcdUnavailableReason();
if (skip) {
  results.push({ backend: `etcd (skipped: ${skip})` });
} else {
  const etcd = await startTestEtcd();
  try {
    results.push(await runBackend('etcd', createEtcdStore({ endpoints: [etcd.endpoint] })));
  } finally {
    await etcd.stop();
  }
}

if (args.json) {
  process.stdout.write(JSON.stringify({ keys: KEYS, concurrency: CONCURRENCY, watchers: WATCHERS, events: EVENTS, results }, null, 2) + '\n');
} else {
  const rows: [string, string][] = [
    [`create ×${KEYS}, ${CONCURRENCY} concurrent: p50 / p99 ms`, 'create'],
    ['create throughput (ops/s)', 'createsPerSec'],
    [`list ${KEYS} keys: p50 / p99 ms`, 'list'],
    [`list ${KEYS} keys in pages of 500: p50 / p99 ms`, 'listPaged500'],
    [`watch delivery, ${WATCHERS} watchers × ${EVENTS} events: p50 / p99 ms`, 'watchDelivery'],
    ['watch: last of the watchers to get an event: p50 / p99 ms', 'watchLastOf'],
  ];
  const header = `| storage bench (node ${process.version}) | ${results.map((r) => r.backend).join(' | ')} |`;
  process.stdout.write([header, `|---|${results.map(() => '---|').join('')}`, ...rows.map(([label, k]) => `| ${label} | ${results.map((r) => fmt(r[k])).join(' | ')} |`)].join('\n') + '\n');
}
