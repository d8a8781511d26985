// The console's watch client against a real loopback server that scripts each reply: lists over
// HTTP, watches over WebSockets (one event per message). A watch that ends is resumed from the last
// resourceVersion (bookmarks count); a 410 — as an ERROR event or as the status of a refused
// watch — relists; a refused WebSocket is asked again over HTTP for the server's message, and a
// 403 there ends the watch with it; a dropped connection is reported and retried.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { test } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { WebSocket, WebSocketServer } from 'ws';
import { createApi } from '../src/api.js';
import { bearerProtocol } from '../src/exec-channel.js';
import { listAndWatch, WATCH_PROTOCOL, type KObject } from '../src/watch.js';

type Reply = { http: (res: http.ServerResponse) => void } | { ws: (ws: WebSocket) => void } | { refuse: number };

async function scriptedServer(replies: Reply[]): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`GET ${req.url} ${req.headers.authorization}`);
    const reply = replies.shift();
    if (reply && 'http' in reply) reply.http(res);
    else res.writeHead(200, { 'Content-Type': 'application/json' }).write(''); // held open
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has(WATCH_PROTOCOL) ? WATCH_PROTOCOL : false) });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    seen.push(`WS ${req.url} ${req.headers['sec-websocket-protocol']}`);
    const reply = replies.shift();
    if (reply && 'refuse' in reply) return void socket.end(`HTTP/1.1 ${reply.refuse} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    wss.handleUpgrade(req, socket, head, (ws) => reply && 'ws' in reply && reply.ws(ws)); // no reply: held open
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const obj = (name: string, rv: string): KObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const list = (rv: string, ...items: KObject[]): Reply => ({ http: (res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: rv }, items })) });
/** A watch that sends `evs`, one per message, then closes as the server does at timeoutSeconds. */
const events = (...evs: object[]): Reply => ({
  ws: (ws) => {
    for (const e of evs) ws.send(JSON.stringify(e) + '\n');
    ws.close(1000);
  },
});
const status = (code: number, message: string): Reply => ({ http: (res) => void res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code, message })) });

function start(url: string, t: { after(fn: () => unknown): void }): { names: () => string[]; errors: (string | undefined)[]; done: Promise<void> } {
  let names: string[] = [];
  const errors: (string | undefined)[] = [];
  const ac = new AbortController();
  t.after(() => ac.abort());
  const done = listAndWatch({
    api: createApi('secret-token', url, undefined, (u, p) => new WebSocket(u, p) as unknown as globalThis.WebSocket),
    path: '/api/v1/namespaces/default/pods',
    onChange: (items) => void (names = items.map((i) => i.metadata.name!).sort()),
    onError: (m) => void errors.push(m),
    signal: ac.signal,
    retryMs: 20,
  });
  return { names: () => names, errors, done };
}

test('a watch that ends resumes from the last resourceVersion seen, bookmarks included; the token rides as a subprotocol', async (t) => {
  const s = await scriptedServer([
    list('10', obj('a', '5')),
    events({ type: 'ADDED', object: obj('b', '11') }, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } }),
    events({ type: 'DELETED', object: obj('a', '16') }),
  ]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await pollUntil('the third watch is held', async () => (s.seen.length >= 4 ? true : undefined), { timeoutMs: 5000, intervalMs: 10 });
  assert.match(s.seen[0]!, /^GET \/api\/v1\/namespaces\/default\/pods Bearer secret-token$/);
  assert.match(s.seen[1]!, /^WS \/api\/v1\/namespaces\/default\/pods\?watch=1&allowWatchBookmarks=true&resourceVersion=10 /);
  assert.ok(s.seen[1]!.endsWith(` ${bearerProtocol('secret-token')},${WATCH_PROTOCOL}`), s.seen[1]);
  assert.match(s.seen[2]!, /^WS \S*resourceVersion=15 /, 'resumed from the bookmark');
  assert.match(s.seen[3]!, /^WS \S*resourceVersion=16 /, 'resumed from the deletion');
  assert.ok(s.seen.every((l) => !/secret-token/.test(l.split(' ')[1]!)), 'the token is never in a URL');
  await pollUntil('b alone', async () => (w.names().join() === 'b' ? true : undefined), { timeoutMs: 5000, intervalMs: 10 });
});

test('410 Gone as an ERROR event, or as the status of a refused watch, lists again', async (t) => {
  const s = await scriptedServer([
    list('10', obj('a', '5')),
    events({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version: 10 (20)' } }),
    list('30', obj('c', '25')),
    { refuse: 410 },
    status(410, 'too old resource version: 30 (40)'),
    list('50', obj('d', '45')),
  ]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await pollUntil('watching from the third list', async () => (s.seen.length >= 7 ? true : undefined), { timeoutMs: 5000, intervalMs: 10 });
  assert.match(s.seen[2]!, /^GET \S+pods /, 'an ERROR 410 relists');
  assert.match(s.seen[4]!, /^GET \S*watch=1\S*resourceVersion=30 /, 'a refused WebSocket is asked again over HTTP');
  assert.match(s.seen[5]!, /^GET \S+pods /, 'its 410 relists');
  assert.match(s.seen[6]!, /^WS \S*resourceVersion=50 /);
  assert.deepEqual(w.names(), ['d']);
});

test('403 on a refused watch ends it with the server message; a 500 and a dropped connection are reported and retried', async (t) => {
  const s = await scriptedServer([
    status(500, 'etcd is away'),
    list('10', obj('a', '5')),
    { ws: (ws) => ws.terminate() },
    { refuse: 403 },
    status(403, 'pods is forbidden: User "v" cannot watch resource "pods"'),
  ]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await w.done;
  assert.deepEqual(w.errors.filter((e) => e !== undefined), ['etcd is away', "the watch's connection closed (1006)", 'pods is forbidden: User "v" cannot watch resource "pods"']);
  assert.equal(s.seen.length, 5);
  assert.deepEqual(w.names(), ['a']);
});
