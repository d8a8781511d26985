// probeCri against a fake CRI endpoint: an HTTP/2 server on a unix socket speaking gRPC framing.
import assert from 'node:assert/strict';
import { createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { probeCri } from './cri-probe.js';

function field(n: number, s: string): Buffer {
  const b = Buffer.from(s);
  return Buffer.concat([Buffer.from([(n << 3) | 2, b.length]), b]);
}

async function fakeCri(t: { after(fn: () => Promise<void>): void }, handler: (stream: ServerHttp2Stream, path: string, body: Buffer) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-probe-'));
  const socket = join(dir, 'cri.sock');
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => handler(stream, String(headers[':path']), Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });
  return socket;
}

test('decodes a Version reply and sends VersionRequest{version:"0.1.0"}', async (t) => {
  let seen: { path: string; body: Buffer } | undefined;
  const socket = await fakeCri(t, (stream, path, body) => {
    seen = { path, body };
    const msg = Buffer.concat([field(1, '0.1.0'), field(2, 'containerd'), field(3, '1.6.20'), field(4, 'v1')]);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame);
  });
  assert.deepEqual(await probeCri(socket), { runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' });
  assert.equal(seen?.path, '/runtime.v1.RuntimeService/Version');
  assert.deepEqual(seen?.body, Buffer.concat([Buffer.from([0, 0, 0, 0, 7]), field(1, '0.1.0')]));
});

test('a gRPC error (CRI not initialized) is ERR_UNAVAILABLE with the runtime message', async (t) => {
  const socket = await fakeCri(t, (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '2', 'grpc-message': encodeURIComponent('server is not initialized yet') }, { endStream: true });
  });
  await assert.rejects(probeCri(socket), (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && /not ready: server is not initialized yet/.test(err.message));
});

test('no listener: ERR_UNAVAILABLE naming the socket; a silent server: ERR_DEADLINE_EXCEEDED', async (t) => {
  await assert.rejects(probeCri('/nonexistent/cri.sock'), (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && err.message.includes('"/nonexistent/cri.sock"'));
  const socket = await fakeCri(t, (stream) => {
    t.after(async () => void stream.close());
  });
  await assert.rejects(probeCri(socket, { timeoutMs: 100 }), (err: Error) => hasCode(err, 'ERR_DEADLINE_EXCEEDED'));
});

test('abort rejects with the AbortError', async (t) => {
  const socket = await fakeCri(t, (stream) => {
    t.after(async () => void stream.close());
  });
  const ac = new AbortController();
  const p = probeCri(socket, { signal: ac.signal, timeoutMs: 5_000 });
  ac.abort();
  await assert.rejects(p, { name: 'AbortError' });
});
