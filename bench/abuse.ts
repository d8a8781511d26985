// Abuse soak: one identity throws what the API server must bound at it while a node renews its
// Lease, beside the same renewals with nobody abusing the server, in one run.
//
//   node --conditions=source --import tsx bench/abuse.ts [--seconds 30] [--watches 200] [--slow 50] [--svg]
//
// The API server runs in a child process over a temp SQLite store (its RSS is its own), and the
// node's renewals in another (so the abusers' client work does not delay them), twice:
//
//   baseline  the node renews its Lease every 100 ms (PUT, as the kubelet does every 10 s)
//   abuse     the same renewals, while user `mallory` (may write ConfigMaps and Pods in namespace
//             `abuse`, through a Role) keeps
//             - patch bombs: 40 `copy` ops of a 100 KiB string (JSON patch), 10,001 operations
//             - large objects: 2 MiB ConfigMaps, 10,000-container pods, and one 900 KiB
//               ConfigMap relabelled in a loop (every version goes through the watch cache)
//             - many watches: --watches watches of that namespace's ConfigMaps from mallory
//             - slow bodies: --slow uploads that send a byte a second
//
// Figures: the Lease renewal p99 and the server's peak RSS, each beside the baseline, held to
// the bounds docs/security.md states (RSS ≤ 1 GiB, renewal p99 ≤ 1 s); the abuse requests'
// answers by status go to details. Writes bench/results/abuse.json (bench/lib/results.ts).
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startTestProcess, type TestProcess } from '@nodelet/base/testing';
import { createTokenAuthenticator } from '../control-plane/src/apiserver/auth/authenticator.js';
import { createApiServer } from '../control-plane/src/apiserver/server.js';
import { createTempSqliteStore } from '../control-plane/src/storage/testing/sqlite.js';
import { sampleProcess } from './lib/proc-sample.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    watches: { type: 'string', default: '200' },
    slow: { type: 'string', default: '50' },
    serve: { type: 'boolean', default: false },
    renew: { type: 'string' },
    svg: { type: 'boolean', default: false },
  },
});
const ADMIN = 'admin-token';
const NODE = 'node-token';
const MALLORY = 'mallory-token';
const RSS_BOUND_MIB = 1024;
const LEASE_P99_BOUND_MS = 1000;

/** Child: an API server over a temp SQLite store, with the three identities. */
async function serve(): Promise<void> {
  const store = createTempSqliteStore();
  const staticTokens = new Map([
    [ADMIN, { name: 'admin', groups: ['system:masters', 'system:authenticated'] }],
    [NODE, { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] }],
    [MALLORY, { name: 'mallory', groups: ['system:authenticated'] }],
  ]);
  const authenticator = createTokenAuthenticator({ staticTokens, getSecret: async () => undefined, now: Date.now });
  const server = await createApiServer({ store, authenticator, logger: noopLogger });
  const { url } = await server.listen({ port: 0, host: '127.0.0.1' });
  // The parent stops this child the process kit's way (SIGTERM by PID): close, so the temp store goes too.
  process.once('SIGTERM', () => void server.close().then(() => store.close()).then(() => process.exit(0)));
  process.send!({ url });
}

/** This script again as a child (`--serve`, `--renew <url>`) on the process kit, with an IPC channel. */
function startChild<T>(name: string, args: string[], ipc: (m: unknown) => void, ready: () => T | undefined): Promise<TestProcess<T>> {
  return startTestProcess({ name, command: process.execPath, args: [...process.execArgv, fileURLToPath(import.meta.url), ...args], ipc, ready, graceMs: 30_000 });
}

/** The API server child: ready once it says its URL over IPC. */
async function startServer(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  let url: string | undefined;
  const child = await startChild('abuse server', ['--serve'], (m) => (url = (m as { url: string }).url), () => url);
  return { url: child.ready, pid: child.pid, stop: () => child.stop() };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(base: string, token: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: string }> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(new URL(path, base), { method, agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(payload);
  });
}

async function must(what: string, p: Promise<{ status: number; body: string }>, ok: number[]): Promise<string> {
  const r = await p;
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 300)}`);
  return r.body;
}

/** The node's Lease renewals every 100 ms until `stop`; one latency sample per renewal (ms). */
async function renewLease(base: string, stop: AbortSignal, onReady: () => void): Promise<{ samples: number[]; failures: number }> {
  const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
  let lease = JSON.parse(
    await must('create the Lease', request(base, NODE, 'POST', path, { metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 } }), [201]),
  ) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  const samples: number[] = [];
  let failures = 0;
  onReady();
  while (!stop.aborted) {
    const t0 = performance.now();
    const r = await request(base, NODE, 'PUT', `${path}/n1`, { ...lease, spec: { ...lease.spec, renewTime: new Date().toISOString().replace('Z', '000Z') } });
    samples.push(performance.now() - t0);
    if (r.status === 200) lease = JSON.parse(r.body) as typeof lease;
    else failures++;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { samples, failures };
}

/** Child: renews the Lease on the server at `base` until told to stop, then reports. */
async function renewer(base: string): Promise<void> {
  const stop = new AbortController();
  process.once('message', () => stop.abort());
  const result = await renewLease(base, stop.signal, () => process.send!('ready'));
  process.send!(result, () => process.exit(0));
}

/**
 * Starts the renewer child, resolved once it renews; `finish()` stops the renewals and returns
 * its samples; `stop()` ends the child (after finish(), or on a failure before it).
 */
async function startRenewer(base: string): Promise<{ finish(): Promise<{ samples: number[]; failures: number }>; stop(): Promise<void> }> {
  let renewing = false;
  let result: { samples: number[]; failures: number } | undefined;
  // 'ready': the Lease exists and renewals begin; then, after 'stop', the samples.
  const child = await startChild('lease renewer', ['--renew', base], (m) => (m === 'ready' ? (renewing = true) : (result = m as typeof result)), () => renewing);
  return {
    finish: () => {
      child.send('stop');
      return pollUntil('the Lease renewer\'s samples', () => {
        if (result) return result;
        const ended = child.exited();
        if (ended) throw new RenewerExited(`the Lease renewer exited with ${ended.code ?? ended.signal} before it sent its samples`);
        return undefined;
      }, { timeoutMs: 60_000, intervalMs: 20, fatal: (err) => err instanceof RenewerExited });
    },
    stop: () => child.stop(),
  };
}

/** The renewer is gone without its samples: waiting longer cannot help. */
class RenewerExited extends Error {}

/** Runs `fn` in a loop until `stop`, counting the answers' statuses. */
async function loop(stop: AbortSignal, counts: Record<string, number>, what: string, fn: () => Promise<{ status: number }>): Promise<void> {
  while (!stop.aborted) {
    const { status } = await fn();
    counts[`${what} ${status}`] = (counts[`${what} ${status}`] ?? 0) + 1;
  }
}

/** A watch that reads and counts bytes; destroyed at the end. */
function watch(base: string, path: string): { bytes: number; close(): void } {
  const w = { bytes: 0, close: () => req.destroy() };
  const req = http.get(new URL(path, base), { headers: { Authorization: `Bearer ${MALLORY}` } }, (res) => {
    res.on('data', (c: Buffer) => (w.bytes += c.length));
    res.on('error', () => undefined); // destroyed at the end of the run
  });
  req.on('error', () => undefined);
  return w;
}

/** An upload that declares 1 KiB and sends a byte a second (what helper chain's body deadline cuts off). */
function slowBody(base: string): { socket: net.Socket; timer: NodeJS.Timeout } {
  const u = new URL(base);
  const socket = net.connect({ host: u.hostname, port: Number(u.port) });
  socket.on('error', () => undefined);
  socket.write(`POST /api/v1/namespaces/abuse/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MALLORY}\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n`);
  const timer = setInterval(() => socket.write(' '), 1000);
  return { socket, timer };
}

async function abuse(base: string, stop: AbortSignal, o: { watches: number; slow: number }): Promise<{ counts: Record<string, number>; watchBytes: number }> {
  const ns = '/api/v1/namespaces/abuse';
  const counts: Record<string, number> = {};
  const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(900 * 1024) } };
  await must('create the large ConfigMap', request(base, MALLORY, 'POST', `${ns}/configmaps`, big), [201]);
  await must('create the bomb target', request(base, MALLORY, 'POST', `${ns}/configmaps`, { ...big, metadata: { name: 'target' }, data: { a: 'x'.repeat(100 * 1024) } }), [201]);
  const watches = Array.from({ length: o.watches }, () => watch(base, `${ns}/configmaps?watch=true`));
  const slow = Array.from({ length: o.slow }, () => slowBody(base));
  const copies = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` })));
  const doubling = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/x${i}` })));
  const manyOps = JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'target' })));
  const twoMiB = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'huge-' }, data: { a: 'x'.repeat(2 * 1024 * 1024) } });
  const widePod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'wide-' }, spec: { containers: Array.from({ length: 10_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox:1' })) } });
  const JSON_PATCH = 'application/json-patch+json';
  let label = 0;
  try {
    await Promise.all([
      loop(stop, counts, 'copy bomb', () => request(base, MALLORY, 'PATCH', `${ns}/configmaps/target`, copies, JSON_PATCH)),
      loop(stop, counts, 'doubling bomb', () => request(base, MALLORY, 'PATCH', `${ns}/configmaps/target`, doubling, JSON_PATCH)),
      loop(stop, counts, '10,001 ops', () => request(base, MALLORY, 'PATCH', `${ns}/configmaps/target`, manyOps, JSON_PATCH)),
      loop(stop, counts, '2 MiB ConfigMap', () => request(base, MALLORY, 'POST', `${ns}/configmaps`, twoMiB)),
      loop(stop, counts, '10,000-container pod', () => request(base, MALLORY, 'POST', `${ns}/pods`, widePod)),
      loop(stop, counts, 'relabel 900 KiB', () => request(base, MALLORY, 'PATCH', `${ns}/configmaps/big`, { metadata: { labels: { n: String(label++) } } }, 'application/merge-patch+json')),
    ]);
  } finally {
    for (const w of watches) w.close();
    for (const s of slow) {
      clearInterval(s.timer);
      s.socket.destroy();
    }
  }
  return { counts, watchBytes: watches.reduce((n, w) => n + w.bytes, 0) };
}

interface Phase {
  leaseP99Ms: number;
  leaseP50Ms: number;
  renewals: number;
  renewalFailures: number;
  rssMaxMiB: number;
  abuse?: { counts: Record<string, number>; watchBytes: number };
}

async function phase(withAbuse: boolean, seconds: number, o: { watches: number; slow: number }): Promise<Phase> {
  const s = await startServer();
  let lease: Awaited<ReturnType<typeof startRenewer>> | undefined;
  try {
    await must('create namespace abuse', request(s.url, ADMIN, 'POST', '/api/v1/namespaces', { metadata: { name: 'abuse' } }), [201]);
    // No controllers run: the pods' ServiceAccount is made here (admission wants it).
    await must('create the default ServiceAccount', request(s.url, ADMIN, 'POST', '/api/v1/namespaces/abuse/serviceaccounts', { metadata: { name: 'default' } }), [201]);
    const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/abuse';
    const role = { metadata: { name: 'writer' }, rules: [{ apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] };
    await must('create the writer Role', request(s.url, ADMIN, 'POST', `${rbac}/roles`, role), [201]);
    const binding = { metadata: { name: 'mallory' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' }, subjects: [{ kind: 'User', name: 'mallory', apiGroup: 'rbac.authorization.k8s.io' }] };
    await must('bind mallory to it', request(s.url, ADMIN, 'POST', `${rbac}/rolebindings`, binding), [201]);
    const stop = new AbortController();
    const ms = seconds * 1000;
    lease = await startRenewer(s.url);
    const rss = sampleProcess(s.pid, ms);
    let failure: unknown;
    const attack = withAbuse
      ? abuse(s.url, stop.signal, o).catch((err: unknown) => {
          failure = err;
          stop.abort();
          return undefined;
        })
      : undefined;
    const { rssMaxMiB } = await rss;
    stop.abort();
    const { samples, failures } = await lease.finish();
    const attacked = await attack;
    if (failure) throw failure;
    return {
      leaseP99Ms: percentile(samples, 99),
      leaseP50Ms: percentile(samples, 50),
      renewals: samples.length,
      renewalFailures: failures,
      rssMaxMiB,
      ...(attacked ? { abuse: attacked } : {}),
    };
  } finally {
    await lease?.stop();
    await s.stop();
  }
}

async function main(): Promise<void> {
  const seconds = Number(args.seconds);
  const o = { watches: Number(args.watches), slow: Number(args.slow) };
  const baseline = await phase(false, seconds, o);
  const abused = await phase(true, seconds, o);
  const f = (n: number): string => n.toFixed(1);
  console.log(`Lease renewal (PUT every 100 ms, ${seconds} s): p99 ${f(abused.leaseP99Ms)} ms under abuse vs ${f(baseline.leaseP99Ms)} ms without; p50 ${f(abused.leaseP50Ms)} vs ${f(baseline.leaseP50Ms)} ms; ${abused.renewalFailures} of ${abused.renewals} failed under abuse`);
  console.log(`server peak RSS: ${f(abused.rssMaxMiB)} MiB under abuse vs ${f(baseline.rssMaxMiB)} MiB without (bound ${RSS_BOUND_MIB} MiB)`);
  console.log(`abuse answers: ${Object.entries(abused.abuse?.counts ?? {}).map(([k, n]) => `${k}: ${n}`).join(', ')}; ${o.watches} watches read ${abused.abuse?.watchBytes ?? 0} B`);
  const figures: BenchFigure[] = [
    { group: 'node Lease renewal', name: 'p99 under abuse', unit: 'ms', value: abused.leaseP99Ms, baseline: { label: 'no abuse', value: baseline.leaseP99Ms }, target: { op: '<=', value: LEASE_P99_BOUND_MS } },
    { group: 'API server', name: 'peak RSS under abuse', unit: 'MiB', value: abused.rssMaxMiB, baseline: { label: 'no abuse', value: baseline.rssMaxMiB }, target: { op: '<=', value: RSS_BOUND_MIB } },
  ];
  const out = writeBenchResults('abuse', figures, { details: { seconds, ...o, baseline, abused }, svg: args.svg });
  for (const line of out.targetLines) console.log(line);
  console.log(`wrote ${out.json}${out.svg ? ` and ${out.svg}` : ''}`);
  agent.destroy();
}

// Last, so every const above is initialised before either side runs.
if (args.serve) await serve();
else if (args.renew !== undefined) await renewer(args.renew);
else await main();
