// API client transports side by side: undici (Pool) and node:https (keep-alive Agent), against
// the same `nodelet server` (a child process: SQLite, HTTPS, admin token), rounds interleaved so
// drift hits both alike. The server runs in its own process so this process's CPU time is the
// client's alone: besides latency and throughput it reports client CPU per request.
//
//   node --conditions=source --import tsx bench/apiclient.ts [--objects 500] [--concurrency 16] [--rounds 3] [--events 200]
//
// Per transport: create (POST, C concurrent), get (GET one object, C concurrent), list (all N
// objects), watch (latency from a create's reply to the watcher reading its ADDED event, and
// events/s of a burst). p50/p99 per request and throughput.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiClient, CONFIGMAPS, loadKubeconfig, type ConfigMap, type ResolvedKubeconfig } from '@nodelet/api';
import { startServerProcess } from '@nodelet/base/testing';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    objects: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    events: { type: 'string', default: '200' },
  },
});
const N = Number(args.objects);
const C = Number(args.concurrency);
const ROUNDS = Number(args.rounds);
const EVENTS = Number(args.events);
type Kind = 'undici' | 'node';

interface Sample { lat: number[]; seconds: number; count: number; cpuUs: number }
const empty = (): Sample => ({ lat: [], seconds: 0, count: 0, cpuUs: 0 });
const results: Record<Kind, Record<string, Sample>> = { undici: {}, node: {} };
const add = (k: Kind, op: string, m: { lat: number[]; seconds: number; cpuUs: number }): void => {
  const s = (results[k][op] ??= empty());
  s.lat.push(...m.lat);
  s.seconds += m.seconds;
  s.count += m.lat.length;
  s.cpuUs += m.cpuUs;
};
const cpuNow = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function parallel(n: number, fn: (i: number) => Promise<void>, width = C): Promise<{ lat: number[]; seconds: number; cpuUs: number }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const c0 = cpuNow();
  await Promise.all(Array.from({ length: width }, async () => {
    for (let i = next++; i < n; i = next++) {
      const t = performance.now();
      await fn(i);
      lat.push(performance.now() - t);
    }
  }));
  return { lat, seconds: (performance.now() - t0) / 1000, cpuUs: cpuNow() - c0 };
}

const cm = (name: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels: { bench: 'apiclient' } }, data: { k: 'v'.repeat(256) } });

async function round(kind: Kind, cfg: ResolvedKubeconfig, r: number): Promise<void> {
  const api = new ApiClient({ ...cfg, http: kind, maxSockets: C + 4 });
  const prefix = `${kind}-${r}-`;
  try {
    add(kind, 'create', await parallel(N, async (i) => void (await api.create(CONFIGMAPS, cm(`${prefix}${i}`)))));
    add(kind, 'get', await parallel(N, async (i) => void (await api.get(CONFIGMAPS, `${prefix}${i}`, { namespace: 'default' }))));
    add(kind, 'list', await parallel(10, async () => void (await api.list(CONFIGMAPS, { namespace: 'default', labelSelector: 'bench=apiclient' })), 1));
    // watch: sequential creates, each timed from its reply to the watcher reading it
    const ac = new AbortController();
    const seen = new Map<string, number>();
    const rv = (await api.list(CONFIGMAPS, { namespace: 'default', limit: 1 })).metadata.resourceVersion;
    const waiting = new Map<string, () => void>();
    const watching = (async () => {
      try {
        for await (const e of api.watch(CONFIGMAPS, { namespace: 'default', resourceVersion: rv, signal: ac.signal })) {
          if (e.type !== 'ADDED') continue;
          const name = (e.object as ConfigMap).metadata.name!;
          seen.set(name, performance.now());
          waiting.get(name)?.();
        }
      } catch {
        // aborted
      }
    })();
    const wlat: number[] = [];
    const w0 = performance.now();
    const c0 = cpuNow();
    for (let i = 0; i < EVENTS; i++) {
      const name = `${prefix}w${i}`;
      const arrived = new Promise<void>((res) => waiting.set(name, res));
      await api.create(CONFIGMAPS, cm(name));
      const replied = performance.now();
      await arrived;
      wlat.push(Math.max(0, seen.get(name)! - replied));
    }
    add(kind, 'watch', { lat: wlat, seconds: (performance.now() - w0) / 1000, cpuUs: cpuNow() - c0 });
    ac.abort();
    await watching;
  } finally {
    api.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-apiclient-'));
const server = await startServerProcess({ dataDir: dir, args: ['--disable-controllers'], graceMs: 5_000 });
try {
  const cfg = await loadKubeconfig(server.kubeconfig);
  // warm-up: JIT, TLS session setup, SQLite cache
  await round('undici', cfg, -1);
  await round('node', cfg, -1);
  for (const k of ['undici', 'node'] as Kind[]) results[k] = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of (r % 2 ? ['node', 'undici'] : ['undici', 'node']) as Kind[]) await round(kind, cfg, r);
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`API client transports: ${N} objects, ${C} concurrent, ${EVENTS} watch events, ${ROUNDS} interleaved rounds (same server, same run)`);
console.log('op      transport  p50 ms   p99 ms   req/s  client CPU µs/req');
const verdict: string[] = [];
for (const op of ['create', 'get', 'list', 'watch']) {
  const rate = (k: Kind): number => results[k][op]!.count / results[k][op]!.seconds;
  for (const k of ['undici', 'node'] as Kind[]) {
    const s = results[k][op]!;
    console.log(`${op.padEnd(7)} ${k.padEnd(10)} ${percentile(s.lat, 50).toFixed(2).padStart(7)} ${percentile(s.lat, 99).toFixed(2).padStart(8)} ${rate(k).toFixed(0).padStart(7)} ${(s.cpuUs / s.count).toFixed(0).padStart(10)}`);
  }
  const u = results.undici[op]!;
  const n = results.node[op]!;
  verdict.push(`${op}: undici p99 ${(percentile(u.lat, 99) / percentile(n.lat, 99)).toFixed(2)}× node, throughput ${(rate('undici') / rate('node')).toFixed(2)}×, client CPU ${(u.cpuUs / u.count / (n.cpuUs / n.count)).toFixed(2)}×`);
}
console.log(verdict.join('\n'));
