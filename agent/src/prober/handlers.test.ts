import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Container } from '@nodelet/api';
import { FakeHealthServer } from '@nodelet/cri-client/testing';
import { resolvePort, runProbe, type ExecRunner } from './handlers.js';

const noExec: ExecRunner = { execSync: () => Promise.reject(new Error('no exec expected')) };
const container: Container = { name: 'web', image: 'i', ports: [{ name: 'http', containerPort: 8080 }] };

test('httpGet: 200–399 succeed, others fail; path, headers and named port are used', async (t) => {
  const seen: Array<{ url?: string; hdr?: string | string[] }> = [];
  const srv = http.createServer((req, res) => {
    seen.push({ url: req.url, hdr: req.headers['x-probe'] });
    const code = Number(req.url?.slice(1)) || 200;
    res.writeHead(code).end('body');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const port = (srv.address() as AddressInfo).port;
  const c: Container = { ...container, ports: [{ name: 'http', containerPort: port }] };
  const probe = (path: string) => runProbe({ httpGet: { path, port: 'http', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } }, { container: c, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(5000));
  assert.equal((await probe('/200')).outcome, 'success');
  assert.equal((await probe('/399')).outcome, 'success');
  const bad = await probe('/500');
  assert.deepEqual(bad, { outcome: 'failure', output: 'HTTP probe failed with statuscode: 500' });
  assert.equal((await probe('/404')).outcome, 'failure');
  assert.deepEqual(seen[0], { url: '/200', hdr: 'yes' });
});

test('httpGet: timeoutSeconds bounds a server that never answers', async (t) => {
  const srv = net.createServer(() => undefined);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  const port = (srv.address() as AddressInfo).port;
  const started = Date.now();
  const r = await runProbe({ httpGet: { port }, timeoutSeconds: 1 }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(5000));
  assert.equal(r.outcome, 'failure');
  assert.match(r.output, /deadline exceeded/);
  assert.ok(Date.now() - started < 3000);
});

/** A server that answers through `respond`; closed after the test. */
async function serve(t: import('node:test').TestContext, onSocket: (s: net.Socket) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    onSocket(s);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of sockets) s.destroy();
    srv.close();
  });
  return (srv.address() as AddressInfo).port;
}

/** Writes `text` one byte every `everyMs`, forever (the socket's close stops it). */
function trickle(s: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (s.destroyed) return clearInterval(timer);
    s.write(text[i % text.length]!);
    i++;
  }, everyMs);
  s.on('close', () => clearInterval(timer));
}

test('httpGet: timeoutSeconds bounds the whole probe, not the gap between bytes', async (t) => {
  // Status line and headers a byte every 200 ms: never idle for a second, never complete.
  const headersPort = await serve(t, (s) => trickle(s, 'HTTP/1.1 200 OK\r\nX-Slow: ' + 'y'.repeat(1000), 200));
  // A prompt 200, then a body trickled a byte every 200 ms.
  const bodyPort = await serve(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n');
    trickle(s, 'z', 200);
  });
  for (const [port, during] of [[headersPort, 'awaiting headers'], [bodyPort, 'reading body']] as const) {
    const started = Date.now();
    const r = await runProbe({ httpGet: { port }, timeoutSeconds: 1 }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(10_000));
    const elapsed = Date.now() - started;
    assert.equal(r.outcome, 'failure', during);
    assert.match(r.output, new RegExp(`context deadline exceeded .*${during}`));
    // Not before the probe's 1 s (how much later is the machine's business: bench/, not here).
    assert.ok(elapsed >= 900, `${during}: failed after ${elapsed} ms`);
  }
});

test('httpGet: the status line decides; at most 10 KiB of an endless body is read', async (t) => {
  const port = await serve(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = `4000\r\n${'b'.repeat(0x4000)}\r\n`;
    const pump = (): void => {
      while (!s.destroyed && s.write(chunk));
      if (!s.destroyed) s.once('drain', pump);
    };
    pump();
  });
  const failing = await serve(t, (s) => {
    s.write('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100000\r\n\r\n');
    trickle(s, 'z', 200);
  });
  const target = { container, containerId: 'x', podIP: '127.0.0.1' };
  const started = Date.now();
  const ok = await runProbe({ httpGet: { port }, timeoutSeconds: 5 }, target, noExec, AbortSignal.timeout(10_000));
  assert.equal(ok.outcome, 'success');
  assert.equal(ok.output.length, 10 * 1024);
  const bad = await runProbe({ httpGet: { port: failing }, timeoutSeconds: 5 }, target, noExec, AbortSignal.timeout(10_000));
  assert.deepEqual(bad, { outcome: 'failure', output: 'HTTP probe failed with statuscode: 503' });
  assert.ok(Date.now() - started < 2000, 'the probes waited for the body');
});

test('httpGet: shutdown rejects with AbortError instead of recording a failure', async (t) => {
  const port = await serve(t, () => undefined);
  const ac = new AbortController();
  const p = runProbe({ httpGet: { port }, timeoutSeconds: 5 }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, ac.signal);
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(p, { name: 'AbortError' });
});

test('tcpSocket: an open port succeeds, a closed port fails', async () => {
  const srv = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const target = { container, containerId: 'x', podIP: '127.0.0.1' };
  assert.equal((await runProbe({ tcpSocket: { port } }, target, noExec, AbortSignal.timeout(5000))).outcome, 'success');
  await new Promise((r) => srv.close(r));
  const r = await runProbe({ tcpSocket: { port } }, target, noExec, AbortSignal.timeout(5000));
  assert.equal(r.outcome, 'failure');
  assert.match(r.output, /ECONNREFUSED/);
});

test('exec: exit code decides; timeoutSeconds (default 1) goes to ExecSync; an exec error is a failure', async () => {
  const calls: number[] = [];
  const exec: ExecRunner = { execSync: async (_id, cmd, timeoutS) => (calls.push(timeoutS), { exitCode: cmd[0] === 'true' ? 0 : 1, output: 'out' }) };
  const target = { container, containerId: 'x' };
  assert.equal((await runProbe({ exec: { command: ['true'] } }, target, exec, AbortSignal.timeout(5000))).outcome, 'success');
  assert.deepEqual(await runProbe({ exec: { command: ['false'] }, timeoutSeconds: 4 }, target, exec, AbortSignal.timeout(5000)), { outcome: 'failure', output: 'out' });
  assert.deepEqual(calls, [1, 4]);
  const broken: ExecRunner = { execSync: () => Promise.reject(new Error('container not running')) };
  assert.equal((await runProbe({ exec: { command: ['x'] } }, target, broken, AbortSignal.timeout(5000))).outcome, 'failure');
});

test('resolvePort: numbers, numeric strings and named ports', () => {
  assert.equal(resolvePort(80, container), 80);
  assert.equal(resolvePort('81', container), 81);
  assert.equal(resolvePort('http', container), 8080);
  assert.throws(() => resolvePort('nope', container), /couldn't find port/);
});

test('grpc: SERVING succeeds, other statuses, unknown services and a closed port fail with kubelet messages', async (t) => {
  const hs = await FakeHealthServer.start();
  t.after(() => hs.close());
  const probe = (service?: string) => runProbe({ grpc: { port: hs.port, service }, timeoutSeconds: 2 }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(5000));
  assert.deepEqual(await probe(), { outcome: 'success', output: 'service healthy' });
  hs.set('', 'NOT_SERVING');
  assert.deepEqual(await probe(), { outcome: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
  hs.set('', 'UNKNOWN');
  assert.deepEqual(await probe(), { outcome: 'failure', output: 'service unhealthy (responded with "UNKNOWN")' });
  hs.set('db', 'SERVING');
  assert.equal((await probe('db')).outcome, 'success');
  assert.deepEqual(hs.requests.slice(-1), ['db']);
  const unknown = await probe('nope');
  assert.equal(unknown.outcome, 'failure');
  assert.match(unknown.output, /^error: health rpc probe failed: rpc error: code = NotFound desc = unknown service$/);
  await hs.close();
  const closed = await probe();
  assert.equal(closed.outcome, 'failure');
  assert.match(closed.output, /^error: health rpc probe failed: rpc error: code = Unavailable/);
});

test('grpc: timeoutSeconds bounds a server that never answers', async (t) => {
  const hs = await FakeHealthServer.start();
  t.after(() => hs.close());
  hs.hang = true;
  const started = Date.now();
  const r = await runProbe({ grpc: { port: hs.port }, timeoutSeconds: 1 }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(5000));
  assert.deepEqual(r, { outcome: 'failure', output: 'timeout: health rpc did not complete within 1s' });
  assert.ok(Date.now() - started < 3000);
});

test('grpc: a server without the health service fails as not implementing the protocol', async (t) => {
  const srv = await FakeHealthServer.start({ serveHealth: false });
  t.after(() => srv.close());
  const r = await runProbe({ grpc: { port: srv.port } }, { container, containerId: 'x', podIP: '127.0.0.1' }, noExec, AbortSignal.timeout(5000));
  assert.equal(r.outcome, 'failure');
  assert.match(r.output, /^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /);
});
