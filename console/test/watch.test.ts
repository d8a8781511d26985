// The console's watch client against a real HTTP server on loopback that scripts each reply:
// a watch that ends is resumed from the last resourceVersion (bookmarks count), a 410 — as an
// ERROR event or as the watch's status — relists, and a 403 ends the watch with the server's message.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { createApi } from '../src/api.js';
import { listAndWatch, type KObject } from '../src/watch.js';

type Reply = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function scriptedServer(replies: Reply[]): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization}`);
    const reply = replies.shift();
    if (reply) reply(req, res);
    else res.writeHead(200, { 'Content-Type': 'application/json' }).write(''); // held open: the last watch
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const obj = (name: string, rv: string): KObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const list = (rv: string, ...items: KObject[]): Reply => (_q, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: rv }, items }));
const events = (...evs: object[]): Reply => (_q, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end(evs.map((e) => JSON.stringify(e) + '\n').join(''));
const status = (code: number, message: string): Reply => (_q, res) => void res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code, message }));

function start(url: string, t: { after(fn: () => unknown): void }): { names: () => string[]; errors: (string | undefined)[]; done: Promise<void> } {
  let names: string[] = [];
  const errors: (string | undefined)[] = [];
  const ac = new AbortController();
  t.after(() => ac.abort());
  const done = listAndWatch({
    api: createApi('secret-token', url),
    path: '/api/v1/namespaces/default/pods',
    onChange: (items) => void (names = items.map((i) => i.metadata.name!).sort()),
    onError: (m) => void errors.push(m),
    signal: ac.signal,
    retryMs: 20,
  });
  return { names: () => names, errors, done };
}

test('a watch that ends resumes from the last resourceVersion seen, bookmarks included', async (t) => {
  const s = await scriptedServer([
    list('10', obj('a', '5')),
    events({ type: 'ADDED', object: obj('b', '11') }, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } }),
    events({ type: 'DELETED', object: obj('a', '16') }),
  ]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await pollUntil('the third request (second watch) is held', async () => (s.seen.length >= 4 ? true : undefined), { timeoutMs: 5000, intervalMs: 10 });
  assert.match(s.seen[0]!, /^\/api\/v1\/namespaces\/default\/pods Bearer secret-token$/);
  assert.match(s.seen[1]!, /watch=1&allowWatchBookmarks=true&resourceVersion=10 /);
  assert.match(s.seen[2]!, /resourceVersion=15 /, 'resumed from the bookmark');
  assert.match(s.seen[3]!, /resourceVersion=16 /, 'resumed from the deletion');
  assert.ok(s.seen.every((l) => !/secret-token/.test(l.split(' ')[0]!)), 'the token is never in a URL');
  assert.deepEqual(w.names(), ['b']);
});

test('410 Gone as an ERROR event or as the watch status lists again', async (t) => {
  const s = await scriptedServer([
    list('10', obj('a', '5')),
    events({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version: 10 (20)' } }),
    list('30', obj('c', '25')),
    status(410, 'too old resource version: 30 (40)'),
    list('50', obj('d', '45')),
  ]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await pollUntil('watching from the third list', async () => (s.seen.length >= 6 ? true : undefined), { timeoutMs: 5000, intervalMs: 10 });
  assert.doesNotMatch(s.seen[2]!, /watch=1/, 'an ERROR 410 relists');
  assert.doesNotMatch(s.seen[4]!, /watch=1/, 'a 410 reply relists');
  assert.match(s.seen[5]!, /resourceVersion=50 /);
  assert.deepEqual(w.names(), ['d']);
});

test('403 ends the watch with the server message; a 500 is reported and retried', async (t) => {
  const s = await scriptedServer([status(500, 'etcd is away'), status(403, 'pods is forbidden: User "v" cannot list resource "pods"')]);
  t.after(() => s.close());
  const w = start(s.url, t);
  await w.done;
  assert.deepEqual(w.errors, ['etcd is away', 'pods is forbidden: User "v" cannot list resource "pods"']);
  assert.equal(s.seen.length, 2);
});
