// API server benchmark over HTTPS with the admin token, SQLite and etcd side by side.
//
//   node --conditions=source --import tsx bench/apiserver.ts [--pods 1000] [--concurrency 16] [--watchers 100] [--events 50] [--json]
//
// 1. POST of N pods, C concurrent: per-request p50/p99 and throughput
// 2. LIST of the N pods (JSON, and as kubectl's Table): p50/p99 over 10 runs
// 3. watch fan-out: W watch requests on the namespace, then E sequential pod creates; latency
//    from sending the POST to each watcher reading the ADDED line, p50/p99 over all deliveries
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { noopLogger } from '@nodelet/base';
import { startControlPlane } from '../control-plane/src/control-plane.js';
import { createEtcdStore, createSqliteStore, type Store } from '../control-plane/src/storage/index.js';
import { etcdUnavailableReason, startTestEtcd } from '../control-plane/src/storage/testing/etcd.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '16' },
    watchers: { type: 'string', default: '100' },
    events: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
  },
});
const PODS = Number(args.pods);
const CONCURRENCY = Number(args.concurrency);
const WATCHERS = Number(args.watchers);
const EVENTS = Number(args.events);
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (n: number): string => `${n.toFixed(2)} ms`;

interface Client {
  request(method: string, path: string, body?: string, accept?: string): Promise<{ status: number; body: string }>;
  agent: https.Agent;
}

function client(url: string, ca: string, token: string): Client {
  const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY + WATCHERS + 4, ca });
  return {
    agent,
    request: (method, path, body, accept) =>
      new Promise((resolve, reject) => {
        const req = https.request(new URL(path, url), { method, agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...(accept ? { Accept: accept } : {}), ...(body ? { 'Content-Length': Buffer.byteLength(body) } : {}) } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        });
        req.on('error', reject);
        req.end(body);
      }),
  };
}

const podBody = (name: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', idx: name } },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'], resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
  });

async function run(label: string, store: Store): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-api-'));
  const cp = await startControlPlane({ dataDir: dir, store, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  const c = client(cp.url, cp.caPem, cp.adminToken);
  try {
    // 1. creates
    const lat: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < PODS) {
          const i = next++;
          const s = performance.now();
          const r = await c.request('POST', '/api/v1/namespaces/default/pods', podBody(`p${i}`));
          if (r.status !== 201) throw new Error(`create p${i}: ${r.status} ${r.body}`);
          lat.push(performance.now() - s);
        }
      }),
    );
    const createS = (performance.now() - t0) / 1000;
    // 2. lists
    const listJson: number[] = [];
    const listTable: number[] = [];
    for (let i = 0; i < 10; i++) {
      let s = performance.now();
      const r = await c.request('GET', '/api/v1/namespaces/default/pods');
      listJson.push(performance.now() - s);
      if ((JSON.parse(r.body) as { items: unknown[] }).items.length !== PODS) throw new Error('short list');
      s = performance.now();
      await c.request('GET', '/api/v1/namespaces/default/pods?limit=500', undefined, TABLE);
      listTable.push(performance.now() - s);
    }
    // 3. watch fan-out (in a fresh namespace so no initial events)
    await c.request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fanout' } }));
    const rv = (JSON.parse((await c.request('GET', '/api/v1/namespaces/fanout/pods')).body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const sentAt = new Map<string, number>();
    const deliveries: number[] = [];
    let received = 0;
    const reqs: Array<ReturnType<typeof https.request>> = [];
    await Promise.all(
      Array.from({ length: WATCHERS }, () =>
        new Promise<void>((resolve, reject) => {
          const req = https.request(new URL(`/api/v1/namespaces/fanout/pods?watch=true&resourceVersion=${rv}`, cp.url), { agent: c.agent, headers: { Authorization: `Bearer ${cp.adminToken}` } }, (res) => {
            let buf = '';
            res.on('data', (d: Buffer) => {
              buf += d.toString();
              let i: number;
              while ((i = buf.indexOf('\n')) >= 0) {
                const ev = JSON.parse(buf.slice(0, i)) as { type: string; object: { metadata: { name: string } } };
                buf = buf.slice(i + 1);
                const at = sentAt.get(ev.object.metadata.name);
                if (ev.type === 'ADDED' && at !== undefined) {
                  deliveries.push(performance.now() - at);
                  received++;
                }
              }
            });
            resolve();
          });
          req.on('error', reject);
          req.end();
          reqs.push(req);
        }),
      ),
    );
    for (let i = 0; i < EVENTS; i++) {
      const name = `w${i}`;
      sentAt.set(name, performance.now());
      await c.request('POST', '/api/v1/namespaces/fanout/pods', podBody(name));
      const want = (i + 1) * WATCHERS;
      const deadline = Date.now() + 10_000;
      while (received < want && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    }
    for (const r of reqs) r.destroy();
    const result = {
      createP50: pct(lat, 50),
      createP99: pct(lat, 99),
      createPerSec: PODS / createS,
      listP50: pct(listJson, 50),
      listP99: pct(listJson, 99),
      tableP50: pct(listTable, 50),
      watchP50: pct(deliveries, 50),
      watchP99: pct(deliveries, 99),
      watchDeliveries: deliveries.length,
    };
    if (!args.json) {
      console.log(`${label}: create ${PODS} pods ×${CONCURRENCY}: p50 ${ms(result.createP50)}, p99 ${ms(result.createP99)}, ${result.createPerSec.toFixed(0)}/s`);
      console.log(`${label}: list ${PODS} pods JSON p50 ${ms(result.listP50)} p99 ${ms(result.listP99)}; Table (limit 500) p50 ${ms(result.tableP50)}`);
      console.log(`${label}: watch fan-out ${WATCHERS} watchers × ${EVENTS} events: p50 ${ms(result.watchP50)}, p99 ${ms(result.watchP99)} (${deliveries.length} deliveries)`);
    }
    return result;
  } finally {
    c.agent.destroy();
    await cp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Record<string, Record<string, number>> = {};
const sqliteDir = mkdtempSync(join(tmpdir(), 'nodelet-bench-sqlite-'));
const sqlite = createSqliteStore({ path: join(sqliteDir, 'state.db') });
try {
  results.sqlite = await run('sqlite', sqlite);
} finally {
  await sqlite.close();
  rmSync(sqliteDir, { recursive: true, force: true });
}
const why = etcdUnavailableReason();
if (why) console.log(`etcd: skipped (${why})`);
else {
  const etcd = await startTestEtcd();
  const store = createEtcdStore({ endpoints: [etcd.endpoint], logger: noopLogger });
  try {
    results.etcd = await run('etcd', store);
  } finally {
    await store.close();
    await etcd.stop();
  }
}
if (args.json) console.log(JSON.stringify(results, null, 2));
