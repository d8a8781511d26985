// Streams through the cluster against the same streams straight to the runtime, in one run: a lab
// cluster (`nodelet lab up` on private ports, state dir and bridge) with one busybox pod, then
//
//   rtt      exec `cat`: one byte written, the same byte read back; p50/p99 of --rounds round trips
//   exec     exec `cat`: --mib MiB through stdin and back out of stdout (MiB/s)
//   pf       port-forward: an HTTP GET of a --mib MiB file from httpd in the pod (MiB/s)
//
// each over two paths with the same SPDY client (@nodelet/cri-client):
//
//   cluster  API server pods/exec|portforward → agent node API → containerd streaming URL
//   direct   CRI Exec/PortForward → containerd streaming URL
//
//   node --conditions=source --import tsx bench/streams.ts [--rounds 300] [--mib 64] [--json]
//
// Needs root (starts containerd, creates a bridge). Cleans up after itself.
import { parseArgs } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Duplex } from 'node:stream';
import { pollUntil } from '@nodelet/base';
import { ApiClient, loadKubeconfig, PODS, type ResolvedKubeconfig } from '@nodelet/api';
import { labDown, labUp } from '@nodelet/cli';
import { connectCriClient, openRemoteCommand, PortForwardSession, type CriClient, type SpdyDialOptions } from '@nodelet/cri-client';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '300' },
    mib: { type: 'string', default: '64' },
    json: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const MIB = Number(args.mib);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(MIB) || MIB < 1) {
  console.error('usage: bench/streams.ts [--rounds N] [--mib M] [--json]');
  process.exit(2);
}
if (process.getuid?.() !== 0) {
  console.error('bench/streams needs root: it starts a lab cluster (containerd, a bridge)');
  process.exit(2);
}

interface Path {
  name: 'cluster' | 'direct';
  /** A fresh exec URL for `cat` (stdin + stdout) and the dial options it needs. */
  execUrl(): Promise<string>;
  pfUrl(): Promise<string>;
  dial: SpdyDialOptions;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

async function rtt(path: Path): Promise<number[]> {
  const rc = await openRemoteCommand(await path.execUrl(), { stdin: true, stdout: true, ...path.dial });
  const samples: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      const back = new Promise<void>((resolve, reject) => {
        rc.stdout!.once('data', () => resolve());
        void rc.closed.then(() => reject(new Error("the exec session ended before the echo")));
      });
      rc.stdin!.write('x');
      await back;
      samples.push(performance.now() - t0);
    }
  } finally {
    rc.stdin!.end();
    await rc.closed;
  }
  return samples.sort((a, b) => a - b);
}

/** MiB/s of MIB MiB written to `cat` and read back. */
async function execThroughput(path: Path): Promise<number> {
  const rc = await openRemoteCommand(await path.execUrl(), { stdin: true, stdout: true, ...path.dial });
  const total = MIB * 1024 * 1024;
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const t0 = performance.now();
  let got = 0;
  const drained = new Promise<void>((resolve) => {
    rc.stdout!.on('data', (c: Buffer) => {
      got += c.length;
      if (got >= total) resolve();
    });
  });
  for (let sent = 0; sent < total; sent += chunk.length) {
    if (!rc.stdin!.write(chunk)) await new Promise((r) => rc.stdin!.once('drain', r));
  }
  rc.stdin!.end();
  await drained;
  const s = (performance.now() - t0) / 1000;
  await rc.closed;
  return MIB / s;
}

/** MiB/s of an HTTP GET of /big through one forwarded connection. */
async function pfThroughput(path: Path): Promise<number> {
  const session = await PortForwardSession.dial(await path.pfUrl(), path.dial);
  const total = MIB * 1024 * 1024;
  let got = 0;
  let t0 = 0;
  let forwarded: Promise<void> | undefined;
  const done = new Promise<void>((resolve) => {
    const local = new Duplex({
      read() {},
      write(c: Buffer, _e, cb) {
        got += c.length;
        if (got >= total) resolve();
        cb();
      },
    });
    t0 = performance.now();
    forwarded = session.forward(8080, local);
    local.push('GET /big HTTP/1.0\r\n\r\n');
  });
  const ended = forwarded!.then(() => Promise.reject(new Error(`the connection ended after ${got} bytes`)));
  ended.catch(() => {}); // after a complete read the end is expected
  try {
    await Promise.race([done, ended]);
  } catch (err) {
    session.destroy();
    throw err;
  }
  const s = (performance.now() - t0) / 1000;
  session.destroy();
  return MIB / s;
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-bench-streams-'));
  const lab = {
    stateDir, apiPort: await freePort(), registry: `127.0.0.1:${await freePort()}`, clusterCidr: '10.241.0.0/16', bridge: 'nlb-strm',
    nodeName: 'bench-node', nodeApiPort: await freePort(), healthzPort: await freePort(),
  };
  let cri: CriClient | undefined;
  let api: ApiClient | undefined;
  try {
    console.error("lab up…");
    const up = await labUp(lab);
    console.error("lab is up");
    const kc: ResolvedKubeconfig = await loadKubeconfig(up.kubeconfig);
    api = new ApiClient(kc);
    const script = `mkdir -p /www && head -c ${MIB * 1024 * 1024} /dev/zero > /www/big && exec httpd -f -p 8080 -h /www`;
    await api.create(PODS, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bench', namespace: 'default' },
      spec: { containers: [{ name: 'main', image: up.images.busybox, command: ['sh', '-c', script] }] },
    });
    cri = (await connectCriClient({ endpoint: up.runtimeEndpoint })).client;
    const c = cri;
    const ids = await pollUntil('the bench pod to run', async () => {
      const ctr = (await c.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.name': 'bench' }, state: { state: 'CONTAINER_RUNNING' } } })).containers[0];
      return ctr ? { containerId: ctr.id, podSandboxId: ctr.podSandboxId } : undefined;
    }, { timeoutMs: 120_000, intervalMs: 250 });
    const base = `${kc.server}/api/v1/namespaces/default/pods/bench`;
    const tls = { ca: kc.ca, cert: kc.cert, key: kc.key, rejectUnauthorized: !kc.insecureSkipTlsVerify };
    const paths: Path[] = [
      {
        name: 'cluster',
        execUrl: async () => `${base}/exec?command=cat&stdin=true&stdout=true&container=main`,
        pfUrl: async () => `${base}/portforward`,
        dial: { tls, headers: kc.token ? { Authorization: `Bearer ${kc.token}` } : {} },
      },
      {
        name: 'direct',
        execUrl: async () => (await c.runtime.exec({ containerId: ids.containerId, cmd: ['cat'], stdin: true, stdout: true })).url,
        pfUrl: async () => (await c.runtime.portForward({ podSandboxId: ids.podSandboxId, port: [8080] })).url,
        dial: {},
      },
    ];
    // httpd answers once the file is written; warm both paths up once.
    await pollUntil('httpd', async () => (await pfThroughput({ ...paths[1]! }).then(() => true, () => undefined)), { timeoutMs: 60_000, intervalMs: 500 });
    console.error('measuring…');
    const results: Record<string, { rttP50: number; rttP99: number; execMiBs: number; pfMiBs: number }> = {};
    for (const p of paths) {
      console.error(`${p.name}: rtt`);
      const r = await rtt(p);
      console.error(`${p.name}: exec`);
      const execMiBs = await execThroughput(p);
      console.error(`${p.name}: pf`);
      results[p.name] = { rttP50: percentile(r, 50), rttP99: percentile(r, 99), execMiBs, pfMiBs: await pfThroughput(p) };
    }
    if (args.json) {
      console.log(JSON.stringify({ rounds: ROUNDS, mib: MIB, results }));
      return;
    }
    const cl = results.cluster!;
    const di = results.direct!;
    const row = (name: string, a: number, b: number, unit: string): string => `${name.padEnd(22)} ${a.toFixed(2).padStart(10)} ${b.toFixed(2).padStart(10)} ${unit.padEnd(6)} ${(a / b).toFixed(2).padStart(6)}×`;
    console.log(`streams: ${ROUNDS} round trips, ${MIB} MiB transfers, cluster = API server → agent → containerd, direct = containerd`);
    console.log(`${''.padEnd(22)} ${'cluster'.padStart(10)} ${'direct'.padStart(10)} ${''.padEnd(6)} ${'ratio'.padStart(7)}`);
    console.log(row('exec rtt p50', cl.rttP50, di.rttP50, 'ms'));
    console.log(row('exec rtt p99', cl.rttP99, di.rttP99, 'ms'));
    console.log(row('exec cat throughput', cl.execMiBs, di.execMiBs, 'MiB/s'));
    console.log(row('port-forward GET', cl.pfMiBs, di.pfMiBs, 'MiB/s'));
  } finally {
    cri?.close();
    // The agent unmounts the pod's volumes when the pod goes: delete it while the agent runs.
    const mounts = (): string[] => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${stateDir}/`));
    if (api) {
      await api.delete(PODS, 'bench', { namespace: 'default', gracePeriodSeconds: 0 }).catch(() => undefined);
      await pollUntil('the pod volumes to be unmounted', async () => mounts().length === 0, { timeoutMs: 60_000, intervalMs: 250 }).catch(() => undefined);
      api.close();
    }
    // Whatever is still mounted would make labDown's removal of the state dir fail.
    for (const m of mounts().reverse()) execFileSync('umount', ['-l', m]);
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
