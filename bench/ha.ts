// Agent fail-over time (issue #17): two `nodelet server` processes on one etcd (shared PKI and
// admin token), an ApiClient given both URLs, as the agent is with --api-servers. Each round
// SIGKILLs the server the client is using and measures kill → the client's next successful
// write (writes are retried at once on failure, as a status loop would). The killed server is
// then restarted so that both are up for the next round. Baseline, same run: the same client
// with ONE server, which is SIGKILLed and restarted at once; kill → next successful write.
//
//   node --conditions=source --import tsx bench/ha.ts [--kills 10] [--source] [--svg] [--json]
//
// --source runs the servers from the TypeScript sources (bin/nodelet-dev) instead of dist/
// (build first: npx tsc -b). Writes bench/results/ha.json (bench/lib/results.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { cp as copy, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiClient, CONFIGMAPS } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { childExited, freePort, terminateChild } from '@nodelet/base/testing';
import { startTestEtcd } from '../control-plane/src/storage/testing/etcd.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    kills: { type: 'string', default: '10' },
    source: { type: 'boolean', default: false },
    svg: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const KILLS = Number(args.kills);

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

/** One `nodelet server` child on a fixed port, restartable. */
class ServerProcess {
  child: ChildProcess | undefined;
  constructor(
    readonly dataDir: string,
    readonly port: number,
    readonly etcd: string,
  ) {}

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const bin = args.source ? [join(ROOT, 'bin/nodelet-dev')] : [process.execPath, join(ROOT, 'bin/nodelet')];
    const flags = ['server', `--data-dir=${this.dataDir}`, `--datastore-endpoint=${this.etcd}`, '--bind-address=127.0.0.1', `--port=${this.port}`, '--registry-address=', '--disable-controllers', '--log-level=warn'];
    this.child = spawn(bin[0]!, [...bin.slice(1), ...flags], { stdio: 'ignore' });
    const child = this.child;
    await pollUntil(`server on ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`server on ${this.port} exited with ${child.exitCode}`);
      return readyz(this.url);
    }, { timeoutMs: 60_000, intervalMs: 50 });
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    child.kill('SIGKILL');
    await childExited(child);
  }

  async stop(): Promise<void> {
    if (this.child) await terminateChild(this.child, 5_000);
    this.child = undefined;
  }
}

/**
 * `/readyz` answers 200. The server's CA is not known before its first start, and this only asks
 * "is it serving": certificate checks are the ApiClient's job, so none here.
 */
function readyz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(`${url}/readyz`, { rejectUnauthorized: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

let seq = 0;
/** Writes until one succeeds; returns when it did. */
async function nextWrite(client: ApiClient): Promise<void> {
  for (;;) {
    try {
      await client.create(CONFIGMAPS, { metadata: { name: `ha-${process.pid}-${seq++}`, namespace: 'default' } });
      return;
    } catch {
      // The server is gone or not back yet: the next attempt is the measurement's next try.
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function main(): Promise<void> {
  const etcd = await startTestEtcd();
  const root = await mkdtemp(join(tmpdir(), 'nodelet-bench-ha-'));
  const servers: ServerProcess[] = [];
  const clients: ApiClient[] = [];
  try {
    const [pa, pb] = [await freePort(), await freePort()];
    const a = new ServerProcess(join(root, 'a'), pa, etcd.endpoint);
    const b = new ServerProcess(join(root, 'b'), pb, etcd.endpoint);
    servers.push(a, b);
    await a.start();
    await pollUntil('admin kubeconfig', () => readFile(join(a.dataDir, 'admin.token')).then(() => true, () => false), { timeoutMs: 30_000 });
    await mkdir(b.dataDir, { recursive: true });
    await copy(join(a.dataDir, 'pki'), join(b.dataDir, 'pki'), { recursive: true });
    await copy(join(a.dataDir, 'admin.token'), join(b.dataDir, 'admin.token'));
    await b.start();
    const token = (await readFile(join(a.dataDir, 'admin.token'), 'utf8')).trim();
    const ca = await readFile(join(a.dataDir, 'pki', 'ca.crt'));
    const byUrl = new Map(servers.map((s) => [`${s.url}/`, s]));

    // 1. Fail-over: kill the server in use, time the next write, bring it back.
    const failover: number[] = [];
    const ha = new ApiClient({ server: a.url, servers: [b.url], token, ca, timeoutMs: 5_000, probeIntervalMs: 1_000 });
    clients.push(ha);
    for (let i = 0; i < KILLS; i++) {
      await nextWrite(ha);
      const victim = byUrl.get(ha.server)!;
      const t0 = performance.now();
      await victim.kill();
      await nextWrite(ha);
      failover.push(performance.now() - t0);
      await victim.start();
    }

    // 2. Baseline: one server, killed and restarted at once.
    const restart: number[] = [];
    const single = new ApiClient({ server: a.url, token, ca, timeoutMs: 5_000 });
    clients.push(single);
    for (let i = 0; i < KILLS; i++) {
      await nextWrite(single);
      const t0 = performance.now();
      await a.kill();
      const back = a.start();
      await nextWrite(single);
      restart.push(performance.now() - t0);
      await back;
    }

    const figures: BenchFigure[] = [
      { name: 'fail-over p50', unit: 'ms', value: pct(failover, 50), baseline: { label: 'one server restarted', value: pct(restart, 50) } },
      { name: 'fail-over p99', unit: 'ms', value: pct(failover, 99), baseline: { label: 'one server restarted', value: pct(restart, 99) } },
    ];
    const written = writeBenchResults('ha', figures, { details: { kills: KILLS, failoverMs: failover, restartMs: restart, servers: args.source ? 'source' : 'dist' }, svg: args.svg });
    if (args.json) {
      console.log(JSON.stringify({ failover, restart }));
      return;
    }
    console.log(`kill -9 of the server in use → next successful write, ${KILLS} kills each`);
    console.log(`${'case'.padEnd(36)}${'p50'.padStart(10)}${'p99'.padStart(10)}`);
    console.log(`${'2 servers, client fails over'.padEnd(36)}${pct(failover, 50).toFixed(0).padStart(8)}ms${pct(failover, 99).toFixed(0).padStart(8)}ms`);
    console.log(`${'baseline: 1 server, restarted'.padEnd(36)}${pct(restart, 50).toFixed(0).padStart(8)}ms${pct(restart, 99).toFixed(0).padStart(8)}ms`);
    console.log(`\nwritten to ${written.json}${written.svg ? ` and ${written.svg}` : ''}`);
  } finally {
    for (const c of clients) c.close();
    for (const s of servers) await s.stop();
    await etcd.stop();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
