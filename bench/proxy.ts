// Service proxy: network programming latency (kube-proxy's network_programming_duration SLI: from
// an EndpointSlice change to the rule being live) for 1, 100, 1,000 and 5,000 Services, for partial
// syncs (what the proxy does) and, in the same run, full whole-table syncs (the old behaviour, the
// baseline), each beside the time `nft -f` itself takes; the cost of drift detection (the `nft
// monitor` process's CPU time vs. one read of the whole table, what the old 5 s check did); then
// TCP connection setup through a ClusterIP vs. straight to the pod IP, interleaved in the same run.
//
//   node --conditions=source --import tsx bench/proxy.ts [--iterations 10] [--full-iterations 3]
//        [--sizes 1,100,1000,5000] [--connects 300] [--full-only] [--json] [--svg]
//
// Writes bench/results/proxy.json (bench/lib/results.ts; with --svg also proxy.svg).
//
// --full-only measures the whole-table mode alone. Needs root, nft and conntrack. Everything runs in
// network namespaces it creates (npx-*), with an in-memory API server; the ServiceProxy is the
// agent's. Changes are spaced past minSyncPeriod (1 s) so the latency is the programming path, not
// the debounce. The load average is recorded: other work on the machine shows in every number.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { ENDPOINTSLICES, SERVICES, type ApiClient } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger } from '@nodelet/base';
import { ServiceProxy, type ServiceProxyOptions, type SyncInfo } from '../agent/src/proxy/proxier.js';
import { resolveProxyConfig } from '../agent/src/proxy/config.js';
import { service, slice } from '../agent/src/proxy/testing/fixtures.js';
import { NetnsNode } from '../agent/test/integration/proxy-netns.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { percentile } from './lib/percentile.js';
import { processCpuSeconds } from './lib/proc-sample.js';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '10' },
    'full-iterations': { type: 'string', default: '3' },
    sizes: { type: 'string', default: '1,100,1000,5000' },
    connects: { type: 'string', default: '300' },
    'full-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    svg: { type: 'boolean', default: false },
  },
});
const ITER = Number(args.iterations);
const FULL_ITER = Number(args['full-iterations']);
const SIZES = args.sizes.split(',').map(Number);
const CONNECTS = Number(args.connects);
const FULL_ONLY = args['full-only'];

if (process.getuid?.() !== 0) {
  process.stderr.write('bench/proxy: needs root (netns, nft, conntrack)\n');
  process.exit(2);
}

const f = (ms: number): string => ms.toFixed(1).padStart(7);
const ipOf = (i: number): string => `10.96.${Math.floor(i / 250) + 1}.${(i % 250) + 2}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const net = new NetnsNode();
// Ctrl-C or a timeout's SIGTERM must not leave the namespaces behind (the finally below never runs).
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void net.destroy().finally(() => process.exit(130));
  });
}
let server: InMemoryApiServer | undefined;
let proxy: ServiceProxy | undefined;
const syncWaiters: Array<(i: SyncInfo) => void> = [];
const results: Record<string, unknown> = { loadavgStart: loadavg(), fullOnly: FULL_ONLY, iterations: ITER, fullIterations: FULL_ITER };

async function grow(api: ApiClient, from: number, to: number, podIPs: string[]): Promise<void> {
  for (let i = from; i < to; i++) {
    await api.resource(SERVICES, 'default').create(service(`s${i}`, ipOf(i)));
    await api.resource(ENDPOINTSLICES, 'default').create(slice(`s${i}`, podIPs.map((ip) => ({ ip }))));
  }
}

/** The first sync whose table matches `want` (so a sync already under way for something else does not count). */
function syncWith(want: (i: SyncInfo) => boolean): Promise<SyncInfo> {
  return new Promise((resolve) => {
    const w = (i: SyncInfo): void => (want(i) ? resolve(i) : void syncWaiters.push(w));
    syncWaiters.push(w);
  });
}

/** CPU seconds used so far by the `nft monitor` processes in the node's namespace. */
function monitorCpuS(): number {
  let seconds = 0;
  for (const pid of readPids()) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== 'nft\0monitor\0') continue;
      seconds += processCpuSeconds(Number(pid));
    } catch {
      // The process ended between the listing and the read: it used nothing more.
    }
  }
  return seconds;
}
function readPids(): string[] {
  return execFileSync('ip', ['netns', 'pids', net.node], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
}

interface Row { services: number; mode: 'partial' | 'full'; programmingMs: number[]; nftMs: number[]; syncMs: number[] }

try {
  net.setup();
  const pods = [net.addPod(1), net.addPod(2), net.addPod(3)];
  const client = net.addPod(9);
  for (const [i, p] of pods.entries()) await net.serve(p.ns, `p${i + 1}`, { tcp: 8080 });
  server = await InMemoryApiServer.start();
  const api = server.client();
  // The bench flips `syncMode` between phases; the proxy reads it at every sync.
  const options: ServiceProxyOptions = {
    api, nodeName: 'n1', log: noopLogger, registry: new Registry(), netns: net.node,
    config: resolveProxyConfig({ syncPeriod: '1h', driftCheckPeriod: '1h' }),
    syncMode: FULL_ONLY ? 'full' : 'incremental',
    onSync: (i) => syncWaiters.splice(0).forEach((w) => w(i)),
  };
  proxy = await ServiceProxy.start(options);
  await proxy.synced;
  const podIPs = pods.map((p) => p.ip);
  const rows: Row[] = [];
  let have = 0;
  for (const n of SIZES) {
    const grown = syncWith((i) => i.servicePorts === n && i.endpoints >= 3 * n - 1);
    await grow(api, have, n, podIPs);
    have = n;
    await grown;
    await sleep(1100);
    for (const mode of FULL_ONLY ? (['full'] as const) : (['partial', 'full'] as const)) {
      options.syncMode = mode === 'full' ? 'full' : 'incremental';
      const row: Row = { services: n, mode, programmingMs: [], nftMs: [], syncMs: [] };
      const cpu0 = monitorCpuS();
      for (let k = 0; k < (mode === 'full' ? FULL_ITER : ITER); k++) {
        // Flip service 0 between 2 and 3 endpoints: one EndpointSlice change, seen in the sync's endpoint count.
        const cur = await api.get(ENDPOINTSLICES, 's0-abcde', { namespace: 'default' });
        const eps = (cur.endpoints.length === 3 ? podIPs.slice(0, 2) : podIPs).map((ip) => ({ ip }));
        const synced = syncWith((i) => i.endpoints === 3 * n - 3 + eps.length);
        const t0 = performance.now();
        await api.resource(ENDPOINTSLICES, 'default').update({ ...slice('s0', eps), metadata: { ...slice('s0', eps).metadata, resourceVersion: cur.metadata.resourceVersion } });
        const info = await synced;
        if (info.mode !== mode) throw new Error(`expected a ${mode} sync, got ${info.mode} (${info.reason})`);
        row.programmingMs.push(performance.now() - t0);
        row.nftMs.push(info.applyMs);
        row.syncMs.push(info.durationMs);
        await sleep(1100);
      }
      rows.push(row);
      if (mode === 'partial') results[`monitorCpuS_${n}`] = { partialSyncs: ITER, cpuS: monitorCpuS() - cpu0 };
    }
    options.syncMode = FULL_ONLY ? 'full' : 'incremental';
  }
  results.programming = rows.map((r) => ({
    services: r.services, mode: r.mode, n: r.programmingMs.length,
    p50: percentile(r.programmingMs, 50), p99: percentile(r.programmingMs, 99), nftP50: percentile(r.nftMs, 50), nftP99: percentile(r.nftMs, 99), syncP50: percentile(r.syncMs, 50),
  }));

  // Drift detection: what one read of the whole table costs (the old check, every 5 s) at this size,
  // against the monitor's CPU time over the partial syncs above (it does nothing while idle).
  const t0 = performance.now();
  net.inNode(['sh', '-c', 'nft -j list table ip nodelet-proxy > /dev/null']);
  results.drift = { services: have, wholeTableReadMs: performance.now() - t0, monitorCpuS: results[`monitorCpuS_${have}`] };

  // Connection setup, interleaved in batches so noise hits both alike.
  const via: number[] = [];
  const direct: number[] = [];
  for (let b = 0; b < 6; b++) {
    const count = String(Math.ceil(CONNECTS / 6));
    via.push(...(await net.client<Array<number | null>>(client.ns, ['connect', '--host', ipOf(0), '--port', '80', '--count', count])).filter((x): x is number => x !== null));
    direct.push(...(await net.client<Array<number | null>>(client.ns, ['connect', '--host', podIPs[0]!, '--port', '8080', '--count', count])).filter((x): x is number => x !== null));
  }
  results.connect = { clusterIP: { n: via.length, p50: percentile(via, 50), p99: percentile(via, 99) }, podIP: { n: direct.length, p50: percentile(direct, 50), p99: percentile(direct, 99) }, services: have };
  results.loadavgEnd = loadavg();

  const written = writeBenchResults('proxy', proxyFigures(results), { details: results, svg: args.svg });
  if (args.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  else {
    process.stdout.write(`network programming (EndpointSlice update → rule live); load average ${(results.loadavgStart as number[]).map((x) => x.toFixed(2)).join(' ')} → ${(results.loadavgEnd as number[]).map((x) => x.toFixed(2)).join(' ')}\n`);
    process.stdout.write('services  sync      n   p50 ms   p99 ms | nft -f p50   p99 | whole sync p50\n');
    for (const r of results.programming as Array<Record<string, number | string>>) {
      process.stdout.write(`${String(r.services).padStart(8)}  ${String(r.mode).padEnd(7)} ${String(r.n).padStart(3)} ${f(r.p50 as number)}  ${f(r.p99 as number)} |  ${f(r.nftP50 as number)} ${f(r.nftP99 as number)} | ${f(r.syncP50 as number)}\n`);
    }
    const d = results.drift as { wholeTableReadMs: number; monitorCpuS?: { cpuS: number; partialSyncs: number } };
    process.stdout.write(`\ndrift detection at ${have} services: one read of the whole table ${d.wholeTableReadMs.toFixed(0)} ms; nft monitor CPU over ${d.monitorCpuS?.partialSyncs ?? 0} partial syncs ${(d.monitorCpuS?.cpuS ?? 0).toFixed(2)} s\n`);
    const c = results.connect as { clusterIP: { n: number; p50: number; p99: number }; podIP: { n: number; p50: number; p99: number } };
    process.stdout.write(`\nTCP connect (${have} services in the table)   n    p50 ms   p99 ms\n`);
    process.stdout.write(`  through the ClusterIP              ${String(c.clusterIP.n).padStart(5)} ${f(c.clusterIP.p50)}  ${f(c.clusterIP.p99)}\n`);
    process.stdout.write(`  straight to the pod IP             ${String(c.podIP.n).padStart(5)} ${f(c.podIP.p50)}  ${f(c.podIP.p99)}\n`);
    process.stdout.write(`\nwritten to ${written.json}${written.svg ? ` and ${written.svg}` : ''}\n`);
  }
} finally {
  await proxy?.close();
  await server?.close();
  await net.destroy();
}

/** Kept figures: a partial sync's programming time beside a full rewrite's, and a connect through the ClusterIP beside one to the pod IP. */
function proxyFigures(r: Record<string, unknown>): BenchFigure[] {
  type Row = { services: number; mode: string; p50: number; p99: number };
  const rows = r.programming as Row[];
  const out: BenchFigure[] = [];
  for (const partial of rows.filter((x) => x.mode === 'partial')) {
    const full = rows.find((x) => x.mode === 'full' && x.services === partial.services);
    for (const q of ['p50', 'p99'] as const) {
      out.push({
        group: 'EndpointSlice update → rule live',
        name: `${partial.services} services, ${q}`,
        unit: 'ms',
        value: partial[q],
        ...(full ? { baseline: { label: 'full rewrite', value: full[q] } } : {}),
      });
    }
  }
  const c = r.connect as { clusterIP: { p50: number; p99: number }; podIP: { p50: number; p99: number }; services: number } | undefined;
  if (c) {
    for (const q of ['p50', 'p99'] as const) {
      out.push({ group: `TCP connect, ${c.services} services in the table`, name: `through the ClusterIP, ${q}`, unit: 'ms', value: c.clusterIP[q], baseline: { label: 'to the pod IP', value: c.podIP[q] } });
    }
  }
  return out;
}
