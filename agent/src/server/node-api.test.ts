// The node API on a real TLS port with a fake backend and a fake TokenReview: malformed
// requests and bad WebSocket handshakes get a 4xx Status and the server stays up; a log
// reader stops when its client goes away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { Duplex } from 'node:stream';
import { FakeStreamingServer } from '@nodelet/cri-client/testing';
import { openRemoteCommand, PortForwardSession } from '@nodelet/cri-client';
import { noopLogger, pollUntil, systemClock } from '@nodelet/base';
import type { ApiClient } from '@nodelet/api';
import { rawExchange, type RawReply } from '@nodelet/api/testing';
import { asHeapReport, type HeapReport } from '@nodelet/api/agent';
import type { RuntimeService } from '../kubecontainer/cri.js';
import { NodeApiAuthenticator } from './authn.js';
import { NodeApiAuthorizer } from './authz.js';
import { startNodeApi, type NodeApiServer } from './node-api.js';
import { loadOrCreateServingCert } from './serving-cert.js';
import { cleanups } from '@nodelet/base/testing';

const TOKEN = 'good-token';
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

interface Env {
  api: NodeApiServer;
  streaming: FakeStreamingServer;
  logPath: string;
  target: { host: string; port: number; tls: Record<string, never> };
}

async function start(t: import('node:test').TestContext): Promise<Env> {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-node-api-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  // The runtime's streaming server (SPDY, as containerd's): the fake's default session prints and exits.
  const streaming = await FakeStreamingServer.start();
  cleanup(() => streaming.close());
  const flags = (r: { stdin?: boolean; stdout?: boolean; stderr?: boolean; tty?: boolean }): string =>
    new URLSearchParams({ stdin: String(!!r.stdin), stdout: String(!!r.stdout), stderr: String(!!r.stderr), tty: String(!!r.tty) }).toString();
  const runtime = {
    exec: async (r: { stdin?: boolean }) => ({ url: `${streaming.baseUrl}/exec/x?${flags(r)}` }),
    attach: async (r: { stdin?: boolean }) => ({ url: `${streaming.baseUrl}/attach/x?${flags(r)}` }),
    portForward: async () => ({ url: `${streaming.baseUrl}/portforward/x` }),
  } as unknown as RuntimeService;
  // TokenReview answered in-process: TOKEN is the only valid one.
  const reviews = { create: async (_t: unknown, body: { spec: { token: string } }) => ({ status: { authenticated: body.spec.token === TOKEN, user: { username: 'alice' } } }) } as unknown as ApiClient;
  const logPath = join(dir, 'c.log');
  const api = await startNodeApi({
    address: '127.0.0.1',
    port: 0,
    healthzAddress: '127.0.0.1',
    healthzPort: 0,
    cert: await loadOrCreateServingCert({ rootDir: dir, nodeName: 'n1', ips: ['127.0.0.1'] }),
    authn: new NodeApiAuthenticator({ api: reviews, clock: systemClock, log: noopLogger, anonymous: false, webhook: true, cacheTTLMs: 60_000, clientCA: false }),
    // Authorization has its own tests (authz.test.ts, node-api-authz.itest.ts); this suite is about the HTTP edge.
    authz: new NodeApiAuthorizer({ api: reviews, nodeName: 'n1', clock: systemClock, log: noopLogger, mode: 'AlwaysAllow', cacheAuthorizedTTLMs: 0, cacheUnauthorizedTTLMs: 0 }),
    backend: {
      pods: () => [],
      findContainer: (ns, pod, c) => (ns === 'default' && pod === 'p' && c === 'c' ? { id: 'cid', logPath, running: true } : undefined),
      findSandbox: (ns, pod) => (ns === 'default' && pod === 'p' ? 'sid' : undefined),
      isRunning: async () => true,
      runtime,
      metrics: async () => ({ contentType: 'text/plain', body: '' }),
      healthy: () => true,
    },
    log: noopLogger,
  });
  cleanup(() => api.close());
  return { api, logPath, streaming, target: { host: '127.0.0.1', port: api.port, tls: {} } };
}

const get = (path: string, headers: string[] = [], token: string | null = TOKEN): string =>
  [`GET ${path} HTTP/1.1`, 'Host: n1', ...(token ? [`Authorization: Bearer ${token}`] : []), ...headers, 'Connection: close', '', ''].join('\r\n');
const upgrade = (path: string, headers: string[]): string => get(path, ['Upgrade: websocket', 'Connection: Upgrade', ...headers]).replace('Connection: close\r\n', '');

function assertStatus(r: RawReply, code: number, reason: string): void {
  assert.equal(r.status, code, JSON.stringify(r));
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.deepEqual([body.kind, body.status, body.code, body.reason], ['Status', 'Failure', code, reason], r.body);
}

test('node API: malformed requests get a 4xx Status and the server keeps serving', async (t) => {
  const { target } = await start(t);
  const ws = ['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Protocol: v5.channel.k8s.io'];
  assertStatus(await rawExchange(target, [get('http://[')]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [get('/containerLogs/%zz/p/c')]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [get('/containerLogs/default/%/c')]), 400, 'BadRequest');
  for (const q of ['tailLines=-1', 'tailLines=x', 'sinceSeconds=0', 'limitBytes=0', 'sinceTime=yesterday', 'sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z']) {
    assertStatus(await rawExchange(target, [get(`/containerLogs/default/p/c?${q}`)]), 400, 'BadRequest');
  }
  assertStatus(await rawExchange(target, ['FOO / HTTP/1.1\r\nHost: n1\r\n\r\n']), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [get('/pods', [`X-Big: ${'a'.repeat(100 * 1024)}`])]), 431, 'RequestEntityTooLarge');
  // Upgrades: malformed target and path, unauthenticated, not exec, bad handshakes.
  assertStatus(await rawExchange(target, [upgrade('http://[', ws)]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/%zz/p/c?command=sh', ws)]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/p/c?command=sh', ws).replace(`Authorization: Bearer ${TOKEN}`, 'Authorization: Bearer nope')]), 401, 'Unauthorized');
  assertStatus(await rawExchange(target, [upgrade('//[', ws)]), 404, 'NotFound');
  assertStatus(await rawExchange(target, [upgrade('/pods', ws)]), 404, 'NotFound');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/p/c?command=sh', ws.slice(0, 1))]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/p/c?command=sh', ['Sec-WebSocket-Version: 7', ...ws.slice(1)])]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/p/c?command=sh', [...ws.slice(0, 2), 'Sec-WebSocket-Protocol: chat'])]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/p/c?command=sh', [...ws.slice(0, 2), 'Sec-WebSocket-Protocol: v5.channel.k8s.io,,'])]), 400, 'BadRequest');
  assertStatus(await rawExchange(target, [upgrade('/exec/default/other/c?command=sh', ws)]), 404, 'NotFound');
  const ok = await rawExchange(target, [get('/healthz')]);
  assert.deepEqual([ok.status, ok.body], [200, 'ok']);
});

test('node API: /debug/nodelet/heap?gc=1 reports the heap after a full collection; gc must be an integer', async (t) => {
  const { target } = await start(t);
  const heap = async (q: string): Promise<HeapReport> => {
    const r = await rawExchange(target, [get(`/debug/nodelet/heap${q}`)]);
    assert.equal(r.status, 200, r.body);
    const h = asHeapReport(JSON.parse(r.body));
    assert.ok(h, r.body);
    return h;
  };
  // ~24 MiB of objects this process holds (the server runs in it), then lets go of: only a full
  // collection is sure to have reclaimed them by the next look.
  let held: { i: number; s: string }[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `object ${i}` }));
  const holding = await heap('?gc=1');
  assert.equal(holding.collected, true);
  assert.ok(held.length);
  held = undefined;
  const released = await heap('?gc=1');
  const freedMiB = (holding.heapUsedBytes - released.heapUsedBytes) / 2 ** 20;
  assert.ok(freedMiB > 10, `a full collection should have freed the ~24 MiB let go of; freed ${freedMiB.toFixed(1)} MiB`);
  assert.ok(released.rssBytes > released.heapUsedBytes && released.heapTotalBytes >= released.heapUsedBytes);
  assert.equal((await heap('?gc=0')).collected, false);
  assert.equal((await heap('')).collected, false);
  const bad = await rawExchange(target, [get('/debug/nodelet/heap?gc=yes')]);
  assertStatus(bad, 400, 'BadRequest');
  assert.match(bad.body, /strconv\.ParseInt: parsing \\"yes\\": invalid syntax/);
});

test('node API: a malformed WebSocket frame after the handshake closes that session only', async (t) => {
  const cleanup = cleanups(t);
  const { target } = await start(t);
  const sock = tls.connect({ host: '127.0.0.1', port: target.port, rejectUnauthorized: false });
  cleanup(() => sock.destroy());
  sock.on('error', () => undefined);
  let received = '';
  sock.on('data', (d: Buffer) => {
    received += d.toString('latin1');
    // A client frame must be masked: this one is not (RFC 6455 §5.1).
    if (received.includes('\r\n\r\n') && !sock.destroyed) sock.write(Buffer.from([0x82, 0x03, 0x00, 0x01, 0x02]));
  });
  await new Promise((r) => sock.once('secureConnect', r));
  sock.write(upgrade('/exec/default/p/c?command=sh&stdin=true', ['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Protocol: v5.channel.k8s.io']));
  await new Promise((r) => sock.once('close', r));
  assert.match(received, /^HTTP\/1\.1 101 /);
  const ok = await rawExchange(target, [get('/healthz')]);
  assert.deepEqual([ok.status, ok.body], [200, 'ok']);
});

async function openFdsOf(path: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === path) n++;
  }
  return n;
}

test('node API: a log file that cannot be opened is a 400 with the reason, not an empty 200', async (t) => {
  const { target } = await start(t);
  const r = await rawExchange(target, [get('/containerLogs/default/p/c?tailLines=10')]);
  assert.equal(r.status, 400, JSON.stringify(r));
  assert.match(r.body, /container log file ".*c\.log" does not exist/);
});

test('node API: a log writer parked on a client that stopped reading is released when it goes away', async (t) => {
  const { target, logPath } = await start(t);
  // One 32 MiB line (as the runtime writes it: 16 KiB partial records): more than the socket
  // buffers hold, so the writer must wait for 'drain'.
  const partial = `2024-01-01T00:00:00.000000000Z stdout P ${'x'.repeat(16 * 1024)}\n`;
  await writeFile(logPath, partial.repeat(2 * 1024) + '2024-01-01T00:00:00.000000000Z stdout F end\n');
  const sock = tls.connect({ host: '127.0.0.1', port: target.port, rejectUnauthorized: false });
  sock.on('error', () => undefined);
  await new Promise((r) => sock.once('secureConnect', r));
  sock.write(get('/containerLogs/default/p/c'));
  // Body bytes mean the line has been written: from here the client reads nothing.
  await new Promise<void>((resolve) => {
    let n = 0;
    const onData = (d: Buffer): void => {
      n += d.length;
      if (n < 64 * 1024) return;
      sock.off('data', onData);
      sock.pause();
      resolve();
    };
    sock.on('data', onData);
  });
  assert.equal(await openFdsOf(logPath), 1);
  sock.destroy();
  await pollUntil('the log file to be closed after the client left', async () => (await openFdsOf(logPath)) === 0, { timeoutMs: 5000, intervalMs: 50 });
});

test('node API: SPDY exec, attach and port-forward are spliced to the runtime; a SPDY client without a common protocol gets 403', async (t) => {
  const cleanup = cleanups(t);
  const { target, streaming } = await start(t);
  const base = `https://127.0.0.1:${target.port}`;
  const dial = { headers: { Authorization: `Bearer ${TOKEN}` }, tls: { rejectUnauthorized: false } };
  streaming.handler = (s) => s.onStdinEnd(() => {
    s.write(1, `${s.kind}:${Buffer.concat(s.stdin).toString()}`);
    s.exit(s.kind === 'exec' ? 7 : 0);
  });
  for (const kind of ['exec', 'attach']) {
    // attach spells its booleans as the official Python client does (True/False): kubelet's codec reads both.
    const query = kind === 'exec' ? 'stdin=true&stdout=true&stderr=false' : 'stdin=True&stdout=True&stderr=False';
    const rc = await openRemoteCommand(`${base}/${kind}/default/p/c?command=cat&${query}`, { stdin: true, stdout: true, ...dial });
    const out: Buffer[] = [];
    rc.stdout!.on('data', (c: Buffer) => out.push(c));
    rc.stdin!.end('hi');
    await rc.closed;
    assert.equal(Buffer.concat(out).toString(), `${kind}:hi`);
    assert.match(await rc.status, kind === 'exec' ? /NonZeroExitCode.*"7"/ : /Success/);
  }
  const pf = await PortForwardSession.dial(`${base}/portForward/default/p`, dial);
  cleanup(() => pf.destroy());
  // The local connection: 'ping' then EOF in; what comes back is collected.
  const echoed: Buffer[] = [];
  const local = new Duplex({
    read() {},
    write(c: Buffer, _e, cb) {
      echoed.push(c);
      cb();
    },
  });
  const done = pf.forward(8080, local);
  local.push('ping');
  local.push(null);
  await done;
  assert.equal(Buffer.concat(echoed).toString(), 'ping');
  const spdy = ['Upgrade: SPDY/3.1', 'Connection: Upgrade', 'X-Stream-Protocol-Version: v9.channel.k8s.io'];
  assertStatus(await rawExchange(target, [get('/exec/default/p/c?command=sh', spdy).replace('Connection: close\r\n', '')]), 403, 'Forbidden');
  assertStatus(await rawExchange(target, [get('/portForward/default/nope', ['Upgrade: SPDY/3.1', 'Connection: Upgrade', 'X-Stream-Protocol-Version: portforward.k8s.io']).replace('Connection: close\r\n', '')]), 404, 'NotFound');
});

/** The body of a chunked reply and how many chunks carried it. */
function chunks(raw: Buffer): { body: string; count: number } {
  let pos = raw.indexOf('\r\n\r\n') + 4;
  let body = '';
  let count = 0;
  for (;;) {
    const nl = raw.indexOf('\r\n', pos);
    const size = parseInt(raw.subarray(pos, nl).toString('latin1'), 16);
    if (!(size > 0)) return { body, count };
    body += raw.subarray(nl + 2, nl + 2 + size).toString('utf8');
    count++;
    pos = nl + 2 + size + 2;
  }
}

test('node API: log lines read together are sent as one chunk, not one chunk per line', async (t) => {
  const { target, logPath } = await start(t);
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
  await writeFile(logPath, lines.map((l) => `2024-01-01T00:00:00.000000000Z stdout F ${l}\n`).join(''));
  const sock = tls.connect({ host: '127.0.0.1', port: target.port, rejectUnauthorized: false });
  const parts: Buffer[] = [];
  sock.on('data', (d: Buffer) => parts.push(d));
  await new Promise((r) => sock.once('secureConnect', r));
  sock.write(get('/containerLogs/default/p/c'));
  await new Promise((r) => sock.once('end', r));
  sock.destroy();
  const { body, count } = chunks(Buffer.concat(parts));
  assert.equal(body, lines.map((l) => `${l}\n`).join(''));
  // ~25 KiB of lines, read in one 64 KiB read: a handful of chunks (was 3000).
  assert.ok(count <= 5, `${count} chunks`);
});
