// The API server's edge over plain HTTP on port 0: malformed requests get a 4xx Status and the
// server keeps serving; in-flight limits (429), the request timeout (504) and the slow-watcher
// cut-off (limits.ts, filters/).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { pollUntil, type Logger } from '@nodelet/base';
import { rawExchange, stalledUpload, type RawReply, type StalledUpload } from '@nodelet/api/testing';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import type { Authenticator } from './auth/types.js';
import type { ApiServerLimits } from './limits.js';
import type { ApiServer } from './server.js';
import { startTestApiServer } from './testing/test-server.js';

const USERS: Record<string, { name: string; groups: string[] }> = {
  admin: { name: 'admin', groups: ['system:masters', 'system:authenticated'] },
  node: { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] },
};
const authenticator: Authenticator = { authenticate: async (token) => USERS[token] };

interface Env {
  server: ApiServer;
  port: number;
  warnings: string[];
}

function recordingLogger(warnings: string[]): Logger {
  const log: Logger = { error: () => undefined, warn: (_o, msg) => void warnings.push(msg), info: () => undefined, debug: () => undefined, child: () => log };
  return log;
}

async function start(store: Store, limits: Partial<ApiServerLimits>): Promise<Env> {
  const warnings: string[] = [];
  const { server, url } = await startTestApiServer({ store, authenticator, limits, logger: recordingLogger(warnings) });
  return { server, port: Number(new URL(url).port), warnings };
}

const request = (method: string, path: string, o: { token?: string; body?: string; headers?: string[] } = {}): string =>
  [
    `${method} ${path} HTTP/1.1`,
    'Host: x',
    ...(o.token ? [`Authorization: Bearer ${o.token}`] : []),
    ...(o.body !== undefined ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(o.body)}`] : []),
    ...(o.headers ?? []),
    'Connection: close',
    '',
    o.body ?? '',
  ].join('\r\n');

function assertStatus(r: RawReply, code: number, reason: string): Record<string, unknown> {
  assert.equal(r.status, code, JSON.stringify(r));
  const body = JSON.parse(r.body) as Record<string, unknown>;
  assert.deepEqual([body.kind, body.status, body.code, body.reason], ['Status', 'Failure', code, reason], r.body);
  return body;
}

/** A request whose body never completes (1000 bytes declared, 9 sent); the server must time it out. */
const hangingUpload = (port: number, method: string, path: string, token: string): StalledUpload =>
  stalledUpload({ host: '127.0.0.1', port }, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`, '{"kind":');

const cm = (name: string, size = 10): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(size) } });

describe('API server edge', () => {
  let store: Store;
  before(() => {
    store = createTempSqliteStore();
  });
  after(() => store?.close());

  it('answers malformed targets, paths and headers with a 4xx Status and keeps serving', async (t) => {
    const env = await start(store, { maxHeaderBytes: 16 * 1024 });
    t.after(() => env.server.close());
    const target = { host: '127.0.0.1', port: env.port };
    // `//[` is a path (as Go reads it), not a host: unauthenticated 401, then 404.
    assertStatus(await rawExchange(target, [request('GET', '//[')]), 401, 'Unauthorized');
    assertStatus(await rawExchange(target, [request('GET', '//[', { token: 'admin' })]), 404, 'NotFound');
    assertStatus(await rawExchange(target, [request('GET', 'http://[', { token: 'admin' })]), 400, 'BadRequest');
    assertStatus(await rawExchange(target, [request('GET', '/api/v1/namespaces/%zz/pods', { token: 'admin' })]), 400, 'BadRequest');
    assertStatus(await rawExchange(target, [request('GET', '/api/v1/namespaces/%', { token: 'admin' })]), 400, 'BadRequest');
    assertStatus(await rawExchange(target, [request('GET', '/api/v1/namespaces/%', {})]), 401, 'Unauthorized');
    assertStatus(await rawExchange(target, [request('GET', '//[', { token: 'admin', headers: ['Upgrade: websocket', 'Connection: Upgrade'] })]), 404, 'NotFound');
    assertStatus(await rawExchange(target, [request('GET', 'http://[', { token: 'admin', headers: ['Upgrade: websocket', 'Connection: Upgrade'] })]), 400, 'BadRequest');
    assertStatus(await rawExchange(target, [request('GET', '/api/v1/namespaces/%zz/pods/p/exec', { token: 'admin', headers: ['Upgrade: websocket', 'Connection: Upgrade'] })]), 400, 'BadRequest');
    assertStatus(await rawExchange(target, [request('GET', '/api/v1/pods', { token: 'admin', headers: [`X-Big: ${'a'.repeat(32 * 1024)}`] })]), 431, 'RequestEntityTooLarge');
    const ok = await rawExchange(target, [request('GET', '/api/v1/namespaces/default', { token: 'admin' })]);
    assert.equal(ok.status, 200, ok.body);
  });

  it('answers 429 with Retry-After when the mutating pool is full; admins, reads and watches are not refused', async (t) => {
    const env = await start(store, { maxMutatingRequestsInflight: 1, maxRequestsInflight: 1 });
    t.after(() => env.server.close());
    const target = { host: '127.0.0.1', port: env.port };
    const event = JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'R', message: 'm' });
    // A watch is long-running: it takes no read-only slot.
    const watch = net.connect({ host: '127.0.0.1', port: env.port });
    watch.on('error', () => undefined);
    watch.write(request('GET', '/api/v1/pods?watch=true', { token: 'node' }));
    t.after(() => watch.destroy());
    const held = hangingUpload(env.port, 'POST', '/api/v1/namespaces/default/events', 'node');
    t.after(() => held.socket.destroy());
    const refused = await pollUntil(
      'a 429 while the upload is held',
      async () => {
        const r = await rawExchange(target, [request('POST', '/api/v1/namespaces/default/events', { token: 'node', body: event })]);
        return r.status === 429 ? r : undefined;
      },
      { timeoutMs: 5000, intervalMs: 20 },
    );
    const body = assertStatus(refused, 429, 'TooManyRequests');
    assert.equal(refused.headers['retry-after'], '1');
    assert.deepEqual(body.details, { retryAfterSeconds: 1 });
    const admin = await rawExchange(target, [request('POST', '/api/v1/namespaces/default/configmaps', { token: 'admin', body: cm('by-admin') })]);
    assert.equal(admin.status, 201, admin.body);
    const read = await rawExchange(target, [request('GET', '/api/v1/pods', { token: 'node' })]);
    assert.equal(read.status, 200, read.body);
    held.socket.destroy();
    await pollUntil(
      'the slot to be released',
      async () => (await rawExchange(target, [request('POST', '/api/v1/namespaces/default/events', { token: 'node', body: event })])).status !== 429,
      { timeoutMs: 5000, intervalMs: 20 },
    );
  });

  it('answers 504 Timeout when a request outlives the request timeout; watches are exempt', async (t) => {
    const env = await start(store, { requestTimeoutMs: 300 });
    t.after(() => env.server.close());
    const upload = hangingUpload(env.port, 'POST', '/api/v1/namespaces/default/configmaps', 'admin');
    t.after(() => upload.socket.destroy());
    const started = Date.now();
    const reply = await upload.closed;
    const elapsed = Date.now() - started;
    assert.match(reply, /^HTTP\/1\.1 504 /);
    const status = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    assert.deepEqual([status.kind, status.code, status.reason], ['Status', 504, 'Timeout']);
    assert.match(String(status.message), /^Timeout: request did not complete within requested timeout/);
    assert.deepEqual(env.server.inflight(), { readOnly: 0, mutating: 0 }, 'the timed-out upload holds no slot');
    assert.ok(elapsed >= 250 && elapsed < 3000, `answered after ${elapsed} ms`);
    // A watch runs past the request timeout and ends at its own timeoutSeconds.
    const w = await rawExchange({ host: '127.0.0.1', port: env.port }, [request('GET', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1', { token: 'admin' })], { timeoutMs: 5000 });
    assert.equal(w.status, 200, JSON.stringify(w));
    assert.equal(w.dropped, false);
  });

  it('closes a watch whose client does not read once its unsent bytes pass the cap', async (t) => {
    const env = await start(store, { maxWatchBufferBytes: 256 * 1024 });
    t.after(() => env.server.close());
    const target = { host: '127.0.0.1', port: env.port };
    // The watcher never reads: no 'data' listener, so the socket stops reading once its buffer is full.
    const watcher = net.connect({ host: '127.0.0.1', port: env.port });
    watcher.on('error', () => undefined);
    t.after(() => watcher.destroy());
    watcher.write(request('GET', '/api/v1/namespaces/slow/configmaps?watch=true', { token: 'admin' }).replace('Connection: close\r\n', ''));
    const ns = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'slow' } });
    assert.equal((await rawExchange(target, [request('POST', '/api/v1/namespaces', { token: 'admin', body: ns })])).status, 201);
    const total = 64;
    const size = 256 * 1024;
    for (let i = 0; i < total && !env.warnings.includes('Closing unresponsive watcher'); i++) {
      const r = await rawExchange(target, [request('POST', '/api/v1/namespaces/slow/configmaps', { token: 'admin', body: cm(`c${i}`, size) })]);
      assert.equal(r.status, 201, r.body);
    }
    assert.ok(env.warnings.includes('Closing unresponsive watcher'), `the watcher was not cut after ${total * size} bytes of events`);
    // What the client can still read ends without the chunked terminator: the server dropped it.
    let received = '';
    watcher.on('data', (d: Buffer) => (received += d.toString('latin1')));
    await new Promise((r) => watcher.once('close', r));
    // Only the body can end with the terminator: the head may end in "0\r\n\r\n" too
    // (`Keep-Alive: timeout=90`), and a cut before any event leaves the body empty.
    const body = received.slice(received.indexOf('\r\n\r\n') + 4);
    assert.ok(!body.endsWith('0\r\n\r\n'), `the watch ended cleanly instead of being cut: ${JSON.stringify(received.slice(-200))}`);
    assert.ok(received.length < total * size, `received ${received.length} bytes`);
  });
});
