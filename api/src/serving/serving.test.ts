import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rawExchange, type RawReply } from '../testing/raw-http.js';
import { decodePathSegments, edgeServerOptions, hardenHttpServer, parseRequestTarget } from './index.js';

test('parseRequestTarget: origin-form is always a path; malformed targets are undefined, not thrown', () => {
  assert.equal(parseRequestTarget('/api/v1/pods?watch=1')?.pathname, '/api/v1/pods');
  assert.equal(parseRequestTarget('/api/v1/pods?watch=1')?.searchParams.get('watch'), '1');
  assert.equal(parseRequestTarget('//evil.example/api')?.pathname, '//evil.example/api');
  assert.equal(parseRequestTarget('//[')?.pathname, '//[');
  assert.equal(parseRequestTarget('/%zz')?.pathname, '/%zz');
  assert.equal(parseRequestTarget('https://host:6443/api')?.pathname, '/api');
  assert.equal(parseRequestTarget(undefined)?.pathname, '/');
  for (const bad of ['*', 'ftp://host/x', 'not a url', 'http://[', '']) assert.equal(parseRequestTarget(bad), undefined, bad);
});

test('decodePathSegments: decodes, then splits; bad percent-encoding is undefined', () => {
  assert.deepEqual(decodePathSegments('/api/v1/namespaces/default/pods/a%3Ab'), ['api', 'v1', 'namespaces', 'default', 'pods', 'a:b']);
  assert.deepEqual(decodePathSegments('//a//b/'), ['a', 'b']);
  assert.deepEqual(decodePathSegments('/x/a%2Fb'), ['x', 'a', 'b']);
  for (const bad of ['/%zz', '/api/v1/namespaces/%', '/%E0%A4%A']) assert.equal(decodePathSegments(bad), undefined, bad);
});

async function hardened(t: import('node:test').TestContext, limits = { maxHeaderBytes: 8 * 1024, headersTimeoutMs: 300, requestTimeoutMs: 300 }): Promise<number> {
  const srv = http.createServer(edgeServerOptions(limits), (_req, res) => res.end('ok'));
  hardenHttpServer(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return (srv.address() as AddressInfo).port;
}

function assertStatus(r: RawReply, code: number, reason: string): void {
  assert.equal(r.status, code, JSON.stringify(r));
  assert.equal(r.headers['content-type'], 'application/json');
  const body = JSON.parse(r.body) as { kind: string; status: string; code: number; reason: string };
  assert.deepEqual([body.kind, body.status, body.code, body.reason], ['Status', 'Failure', code, reason]);
}

test('hardenHttpServer: parse errors, oversized headers, CONNECT and Expect get a Status; the server keeps serving', async (t) => {
  const port = await hardened(t);
  const target = { host: '127.0.0.1', port };
  assertStatus(await rawExchange(target, ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n']), 400, 'BadRequest');
  assertStatus(await rawExchange(target, ['GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n']), 400, 'BadRequest');
  assertStatus(await rawExchange(target, ['\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03']), 400, 'BadRequest');
  // The oversized header is still being sent when the server answers: the reply must arrive.
  const big = 'GET / HTTP/1.1\r\nHost: x\r\nX-Big: ' + 'a'.repeat(200 * 1024) + '\r\n\r\n';
  assertStatus(await rawExchange(target, [big]), 431, 'RequestEntityTooLarge');
  assertStatus(await rawExchange(target, ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']), 405, 'MethodNotAllowed');
  assertStatus(await rawExchange(target, ['GET / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n']), 417, 'BadRequest');
  const ok = await rawExchange(target, ['GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
  assert.deepEqual([ok.status, ok.body], [200, 'ok']);
});

test('hardenHttpServer: headers trickled slower than headersTimeout are cut with 408', async (t) => {
  const port = await hardened(t);
  const started = Date.now();
  const parts = ['GET / HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-${i}: y\r\n`)];
  const r = await rawExchange({ host: '127.0.0.1', port }, parts, { gapMs: 50, timeoutMs: 5000 });
  assertStatus(r, 408, 'Timeout');
  assert.ok(Date.now() - started < 1500, `cut after ${Date.now() - started} ms`);
});
