// Watch and list encoding: JSON vs Kubernetes protobuf, and the shared per-event encode cache.
//
//   node --conditions=source --import tsx bench/watch-encoding.ts [--watchers 100] [--events 200] [--pods 1000] [--svg]
//
// 1. One event, encoded as the server does it (a pod as the server stores it, with status):
//    bytes and CPU per event, JSON line vs protobuf frame.
// 2. Fan-out: W watchers (JSON, then protobuf) on one namespace while E updates of one pod go by;
//    the API server runs in a child process so its CPU is its own: server CPU per event and
//    encodes per event, with the encode cache (watchEncodeCache: true, the default) and without
//    (false: every watcher encodes its own copy, the old path and this run's baseline).
// 3. LIST of N pods: bytes and time to the last byte, JSON vs protobuf, p50 of 10.
// Writes bench/results/watch-encoding.json (bench/lib/results.ts).
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { decodeWatchFrame, encodeWatchFrame, encodeProtobufObject } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { startTestProcess } from '@nodelet/base/testing';
import { createTokenAuthenticator } from '../control-plane/src/apiserver/auth/authenticator.js';
import { createApiServer } from '../control-plane/src/apiserver/server.js';
import { createTempSqliteStore } from '../control-plane/src/storage/testing/sqlite.js';
import { writeBenchResults, type BenchFigure } from './lib/results.js';
import { percentile } from './lib/percentile.js';

const { values: args } = parseArgs({
  options: {
    watchers: { type: 'string', default: '100' },
    events: { type: 'string', default: '200' },
    pods: { type: 'string', default: '1000' },
    serve: { type: 'string' },
    svg: { type: 'boolean', default: false },
  },
});
const TOKEN = 'bench-token';
const PROTOBUF = 'application/vnd.kubernetes.protobuf, application/json';
type Media = 'json' | 'protobuf';

/** Child: an API server over a temp SQLite store; answers `cpu` with its CPU time and encode count. */
async function serve(share: boolean): Promise<void> {
  const store = createTempSqliteStore();
  const authenticator = createTokenAuthenticator({ staticTokens: new Map([[TOKEN, { name: 'admin', groups: ['system:masters'] }]]), getSecret: async () => undefined, now: Date.now });
  const server = await createApiServer({ store, authenticator, logger: noopLogger, watchEncodeCache: share });
  const { url } = await server.listen({ port: 0, host: '127.0.0.1' });
  process.on('message', (m: string) => {
    if (m !== 'cpu') return;
    const u = process.cpuUsage();
    process.send!({ cpuMs: (u.user + u.system) / 1000, encodes: server.context.watchEncoder?.encodes ?? 0 });
  });
  // The parent stops this child the process kit's way (SIGTERM by PID): close, so the temp store goes too.
  process.once('SIGTERM', () => void server.close().then(() => store.close()).then(() => process.exit(0)));
  process.send!({ url });
}

interface Server {
  url: string;
  stats(): Promise<{ cpuMs: number; encodes: number }>;
  stop(): Promise<void>;
}

/** This script again as the server child (`--serve`), on the process kit: ready once it says its URL over IPC. */
async function startServer(share: boolean): Promise<Server> {
  let url: string | undefined;
  const waiters: Array<(m: unknown) => void> = [];
  const child = await startTestProcess({
    name: 'watch-encoding server',
    command: process.execPath,
    args: [...process.execArgv, fileURLToPath(import.meta.url), '--serve', String(share)],
    ipc: (m) => {
      if (url === undefined) url = (m as { url: string }).url;
      else waiters.shift()?.(m);
    },
    ready: () => url,
    graceMs: 30_000,
  });
  return {
    url: child.ready,
    stats: () => new Promise((resolve) => {
      waiters.push((m) => resolve(m as { cpuMs: number; encodes: number }));
      child.send('cpu');
    }),
    stop: () => child.stop(),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function request(base: string, method: string, path: string, body?: unknown, o: { accept?: string; contentType?: string } = {}): Promise<{ status: number; body: Buffer }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, agent, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': o.contentType ?? 'application/json', ...(o.accept ? { Accept: o.accept } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const podBody = (name: string): Record<string, unknown> => ({
  metadata: { name, labels: { app: 'bench' } },
  spec: {
    containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'], ports: [{ containerPort: 8080, name: 'http' }], resources: { requests: { cpu: '10m', memory: '16Mi' } }, readinessProbe: { httpGet: { path: '/healthz', port: 'http' } } }],
  },
});

/** A watcher that counts events (newlines or frames) and bytes. */
interface Watcher {
  events: number;
  bytes: number;
  close(): void;
}

function openWatcher(base: string, path: string, media: Media): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const w: Watcher = { events: 0, bytes: 0, close: () => req.destroy() };
    let pending = Buffer.alloc(0);
    const req = http.get(new URL(path, base), { agent, headers: { Authorization: `Bearer ${TOKEN}`, ...(media === 'protobuf' ? { Accept: PROTOBUF } : {}) } }, (res) => {
      res.on('data', (c: Buffer) => {
        w.bytes += c.length;
        if (media === 'json') {
          for (const b of c) if (b === 0x0a) w.events++;
          return;
        }
        pending = Buffer.concat([pending, c]);
        while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
          pending = pending.subarray(4 + pending.readUInt32BE(0));
          w.events++;
        }
      });
      res.on('error', () => undefined); // destroyed at the end of the run
      resolve(w);
    });
    req.on('error', (err) => (w.events === 0 && w.bytes === 0 ? reject(err) : undefined));
  });
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}


/** 1. Encoding one event in-process, the way the server's WatchEventEncoder does. */
function encodeOne(pod: Record<string, unknown>): Record<Media, { bytes: number; cpuUs: number; decodeUs: number }> {
  const N = 2000;
  const json = (): Buffer => Buffer.from(JSON.stringify({ type: 'MODIFIED', object: pod }) + '\n');
  const proto = (): Uint8Array => encodeWatchFrame('MODIFIED', encodeProtobufObject(pod)!);
  const time = (fn: () => unknown): number => {
    for (let i = 0; i < 200; i++) fn();
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) fn();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / N;
  };
  // What a watcher (the agent) spends reading the event back.
  const line = json().toString().trimEnd();
  const frame = proto().subarray(4);
  return {
    json: { bytes: json().length, cpuUs: time(json), decodeUs: time(() => JSON.parse(line)) },
    protobuf: { bytes: proto().length, cpuUs: time(proto), decodeUs: time(() => decodeWatchFrame(frame, 'bench')) },
  };
}

/** 2. Server CPU and encodes per event with W watchers of `media`. */
async function fanOut(share: boolean, media: Media, watchers: number, events: number): Promise<{ cpuMsPerEvent: number; encodesPerEvent: number; bytesPerEvent: number }> {
  const s = await startServer(share);
  try {
    const created = await request(s.url, 'POST', '/api/v1/namespaces/default/pods', podBody('fan'));
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.body.toString()}`);
    const rv = (JSON.parse(created.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const ws = await Promise.all(Array.from({ length: watchers }, () => openWatcher(s.url, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`, media)));
    const before = await s.stats();
    for (let i = 0; i < events; i++) {
      const r = await request(s.url, 'PATCH', '/api/v1/namespaces/default/pods/fan', { metadata: { labels: { step: String(i) } } }, { contentType: 'application/merge-patch+json' });
      if (r.status !== 200) throw new Error(`patch failed: ${r.status}`);
    }
    await waitFor('every watcher to see every event', () => ws.every((w) => w.events >= events));
    const after = await s.stats();
    const bytes = ws.reduce((a, w) => a + w.bytes, 0) / ws.length / events;
    for (const w of ws) w.close();
    return { cpuMsPerEvent: (after.cpuMs - before.cpuMs) / events, encodesPerEvent: (after.encodes - before.encodes) / events, bytesPerEvent: bytes };
  } finally {
    await s.stop();
  }
}

/** 3. LIST of N pods both ways (and one pod as stored, for step 1). */
async function lists(n: number): Promise<{ pod: Record<string, unknown>; list: Record<Media, { bytes: number; p50Ms: number }> }> {
  const s = await startServer(true);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) {
          const r = await request(s.url, 'POST', '/api/v1/namespaces/default/pods', podBody(`p-${next++}`));
          if (r.status !== 201) throw new Error(`create failed: ${r.status}`);
        }
      }),
    );
    await request(s.url, 'PATCH', '/api/v1/namespaces/default/pods/p-0/status', { status: { phase: 'Running', podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }], hostIP: '10.0.0.2', startTime: '2026-12-03T08:00:00Z', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-03T08:00:03Z' }], containerStatuses: [{ name: 'main', ready: true, started: true, restartCount: 0, image: 'docker.io/library/busybox:1.36', imageID: 'sha256:0123', containerID: 'containerd://abc', state: { running: { startedAt: '2026-12-03T08:00:02Z' } } }] } }, { contentType: 'application/merge-patch+json' });
    const pod = JSON.parse((await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p-0')).body.toString()) as Record<string, unknown>;
    const list = {} as Record<Media, { bytes: number; p50Ms: number }>;
    for (const media of ['json', 'protobuf'] as const) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < 11; i++) {
        const t0 = performance.now();
        const r = await request(s.url, 'GET', '/api/v1/namespaces/default/pods', undefined, media === 'protobuf' ? { accept: PROTOBUF } : {});
        if (i > 0) times.push(performance.now() - t0);
        bytes = r.body.length;
      }
      list[media] = { bytes, p50Ms: percentile(times, 50) };
    }
    return { pod, list };
  } finally {
    await s.stop();
  }
}

async function main(): Promise<void> {
  const W = Number(args.watchers);
  const E = Number(args.events);
  const N = Number(args.pods);
  const { pod, list } = await lists(N);
  const one = encodeOne(pod);
  const fan = {} as Record<Media, { shared: Awaited<ReturnType<typeof fanOut>>; perWatcher: Awaited<ReturnType<typeof fanOut>> }>;
  for (const media of ['json', 'protobuf'] as const) fan[media] = { perWatcher: await fanOut(false, media, W, E), shared: await fanOut(true, media, W, E) };

  const f = (n: number, d = 2): string => n.toFixed(d);
  console.log(
    `one pod event (server-stored pod with status): JSON ${one.json.bytes} B, encode ${f(one.json.cpuUs, 1)} µs, decode ${f(one.json.decodeUs, 1)} µs | ` +
      `protobuf ${one.protobuf.bytes} B, encode ${f(one.protobuf.cpuUs, 1)} µs, decode ${f(one.protobuf.decodeUs, 1)} µs`,
  );
  for (const media of ['json', 'protobuf'] as const) {
    const { shared, perWatcher } = fan[media];
    console.log(
      `fan-out to ${W} ${media} watchers, ${E} events: server CPU/event ${f(shared.cpuMsPerEvent)} ms with the encode cache vs ${f(perWatcher.cpuMsPerEvent)} ms without; ` +
        `encodes/event ${f(shared.encodesPerEvent, 1)} vs ${f(perWatcher.encodesPerEvent, 1)}; ${f(shared.bytesPerEvent, 0)} B/event per watcher`,
    );
  }
  console.log(`LIST ${N} pods: JSON ${list.json.bytes} B in ${f(list.json.p50Ms)} ms p50 | protobuf ${list.protobuf.bytes} B in ${f(list.protobuf.p50Ms)} ms p50`);

  const figures: BenchFigure[] = [
    { group: 'one event', name: 'protobuf bytes', unit: 'B', value: one.protobuf.bytes, baseline: { label: 'JSON', value: one.json.bytes } },
    { group: 'one event', name: 'protobuf encode CPU', unit: 'µs', value: one.protobuf.cpuUs, baseline: { label: 'JSON', value: one.json.cpuUs } },
    { group: 'one event', name: 'protobuf decode CPU (watcher)', unit: 'µs', value: one.protobuf.decodeUs, baseline: { label: 'JSON', value: one.json.decodeUs } },
    ...(['json', 'protobuf'] as const).flatMap((media): BenchFigure[] => [
      { group: `fan-out ${W} ${media}`, name: 'server CPU/event, cache', unit: 'ms', value: fan[media].shared.cpuMsPerEvent, baseline: { label: 'per watcher', value: fan[media].perWatcher.cpuMsPerEvent } },
      { group: `fan-out ${W} ${media}`, name: 'encodes/event, cache', unit: '', value: fan[media].shared.encodesPerEvent, baseline: { label: 'per watcher', value: fan[media].perWatcher.encodesPerEvent } },
    ]),
    { group: 'fan-out', name: 'protobuf bytes/event/watcher', unit: 'B', value: fan.protobuf.shared.bytesPerEvent, baseline: { label: 'JSON', value: fan.json.shared.bytesPerEvent } },
    { group: `LIST ${N} pods`, name: 'protobuf bytes', unit: 'B', value: list.protobuf.bytes, baseline: { label: 'JSON', value: list.json.bytes } },
    { group: `LIST ${N} pods`, name: 'protobuf p50', unit: 'ms', value: list.protobuf.p50Ms, baseline: { label: 'JSON', value: list.json.p50Ms } },
  ];
  const out = writeBenchResults('watch-encoding', figures, { details: { watchers: W, events: E, pods: N, one, fan, list }, svg: args.svg });
  console.log(`wrote ${out.json}${out.svg ? ` and ${out.svg}` : ''}`);
  agent.destroy();
}

// Last, so every const above is initialised before either side runs.
if (args.serve !== undefined) await serve(args.serve === 'true');
else await main();
