// Service proxy: network programming latency (kube-proxy's network_programming_duration SLI: from
// an EndpointSlice change to the rule being live) for 1, 100 and 1,000 Services, beside the time
// `nft -f` itself takes for the same table; then TCP connection setup through a ClusterIP vs.
// straight to the pod IP, interleaved in the same run.
//
//   node --conditions=source --import tsx bench/proxy.ts [--iterations 10] [--connects 300] [--json]
//
// Needs root, nft and conntrack. Everything runs in network namespaces it creates (npx-*), with an
// in-memory API server; the ServiceProxy is the agent's. Changes are spaced past minSyncPeriod (1 s)
// so the latency is the programming path, not the debounce.
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { ENDPOINTSLICES, SERVICES, type ApiClient } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger } from '@nodelet/base';
import { ServiceProxy, type SyncInfo } from '../agent/src/proxy/proxier.js';
import { resolveProxyConfig } from '../agent/src/proxy/config.js';
import { service, slice } from '../agent/src/proxy/testing/fixtures.js';
import { NetnsNode } from '../agent/test/integration/proxy-netns.js';

const { values: args } = parseArgs({ options: { iterations: { type: 'string', default: '10' }, connects: { type: 'string', default: '300' }, json: { type: 'boolean', default: false } } });
const ITER = Number(args.iterations);
const CONNECTS = Number(args.connects);

if (process.getuid?.() !== 0) {
  process.stderr.write('bench/proxy: needs root (netns, nft, conntrack)\n');
  process.exit(2);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const f = (ms: number): string => ms.toFixed(1).padStart(7);
const ipOf = (i: number): string => `10.96.${Math.floor(i / 250) + 1}.${(i % 250) + 2}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const net = new NetnsNode();
let server: InMemoryApiServer | undefined;
let proxy: ServiceProxy | undefined;
const syncWaiters: Array<(i: SyncInfo) => void> = [];
const results: Record<string, unknown> = {};

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

try {
  net.setup();
  const pods = [net.addPod(1), net.addPod(2), net.addPod(3)];
  const client = net.addPod(9);
  for (const [i, p] of pods.entries()) await net.serve(p.ns, `p${i + 1}`, { tcp: 8080 });
  server = await InMemoryApiServer.start();
  const api = server.client();
  proxy = await ServiceProxy.start({
    api, nodeName: 'n1', log: noopLogger, registry: new Registry(), netns: net.node,
    config: resolveProxyConfig({ syncPeriod: '1h', driftCheckPeriod: '1h' }),
    onSync: (i) => syncWaiters.splice(0).forEach((w) => w(i)),
  });
  await proxy.synced;
  const podIPs = pods.map((p) => p.ip);
  const rows: Array<{ services: number; programmingMs: number[]; nftMs: number[]; syncMs: number[] }> = [];
  let have = 0;
  for (const n of [1, 100, 1000]) {
    const grown = syncWith((i) => i.servicePorts === n && i.endpoints >= 3 * n - 1);
    await grow(api, have, n, podIPs);
    have = n;
    await grown;
    await sleep(1100);
    const row = { services: n, programmingMs: [] as number[], nftMs: [] as number[], syncMs: [] as number[] };
    for (let k = 0; k < ITER; k++) {
      // Flip service 0 between 2 and 3 endpoints: one EndpointSlice change, seen in the sync's endpoint count.
      const cur = await api.get(ENDPOINTSLICES, 's0-abcde', { namespace: 'default' });
      const eps = (cur.endpoints.length === 3 ? podIPs.slice(0, 2) : podIPs).map((ip) => ({ ip }));
      const synced = syncWith((i) => i.endpoints === 3 * n - 3 + eps.length);
      const t0 = performance.now();
      await api.resource(ENDPOINTSLICES, 'default').update({ ...slice('s0', eps), metadata: { ...slice('s0', eps).metadata, resourceVersion: cur.metadata.resourceVersion } });
      const info = await synced;
      row.programmingMs.push(performance.now() - t0);
      row.nftMs.push(info.applyMs);
      row.syncMs.push(info.durationMs);
      await sleep(1100);
    }
    rows.push(row);
  }
  results.programming = rows.map((r) => ({ services: r.services, p50: pct(r.programmingMs, 50), p95: pct(r.programmingMs, 95), nftP50: pct(r.nftMs, 50), nftP95: pct(r.nftMs, 95), syncP50: pct(r.syncMs, 50) }));

  // Connection setup, interleaved in batches so noise hits both alike.
  const via: number[] = [];
  const direct: number[] = [];
  for (let b = 0; b < 6; b++) {
    const count = String(Math.ceil(CONNECTS / 6));
    via.push(...(await net.client<Array<number | null>>(client.ns, ['connect', '--host', ipOf(0), '--port', '80', '--count', count])).filter((x): x is number => x !== null));
    direct.push(...(await net.client<Array<number | null>>(client.ns, ['connect', '--host', podIPs[0]!, '--port', '8080', '--count', count])).filter((x): x is number => x !== null));
  }
  results.connect = { clusterIP: { n: via.length, p50: pct(via, 50), p99: pct(via, 99) }, podIP: { n: direct.length, p50: pct(direct, 50), p99: pct(direct, 99) }, services: have };

  if (args.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  else {
    process.stdout.write(`network programming (EndpointSlice update → rule live), ${ITER} changes each\n`);
    process.stdout.write('services   p50 ms   p95 ms | nft -f p50   p95 | whole sync p50\n');
    for (const r of results.programming as Array<Record<string, number>>) {
      process.stdout.write(`${String(r.services).padStart(8)} ${f(r.p50!)}  ${f(r.p95!)} |  ${f(r.nftP50!)} ${f(r.nftP95!)} | ${f(r.syncP50!)}\n`);
    }
    const c = results.connect as { clusterIP: { n: number; p50: number; p99: number }; podIP: { n: number; p50: number; p99: number } };
    process.stdout.write(`\nTCP connect (${have} services in the table)   n    p50 ms   p99 ms\n`);
    process.stdout.write(`  through the ClusterIP              ${String(c.clusterIP.n).padStart(5)} ${f(c.clusterIP.p50)}  ${f(c.clusterIP.p99)}\n`);
    process.stdout.write(`  straight to the pod IP             ${String(c.podIP.n).padStart(5)} ${f(c.podIP.p50)}  ${f(c.podIP.p99)}\n`);
  }
} finally {
  await proxy?.close();
  await server?.close();
  await net.destroy();
}
