import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hasCode, pollUntil } from '@nodelet/base';
import { Informer } from '../informer/informer.js';
import { CONFIGMAPS } from '../types/resources.js';
import type { ConfigMap } from '../types/index.js';
import { ApiClient } from './api-client.js';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
}

/**
 * A tiny API server that names itself in every reply: lists and gets return one ConfigMap at
 * `rv`, a watch sends one MODIFIED event at `rv + 1` and stays open, `/readyz` answers ok.
 * `stop()` kills it as a crash does (listener and every connection gone); `start()` brings it
 * back on the same port.
 */
class NamedServer {
  readonly seen: Seen[] = [];
  /** POSTs are answered by destroying the socket after reading the body (a server dying mid-write). */
  resetWrites = false;
  #server: http.Server | undefined;
  #port = 0;

  constructor(
    readonly name: string,
    readonly rv: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.#handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const s = this.#server;
    if (!s) return;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeAllConnections();
    await closed;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    this.seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams });
    const cm = (rv: number): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', resourceVersion: String(rv) }, data: { server: this.name } });
    req.resume();
    req.on('end', () => {
      if (url.pathname === '/readyz') return void res.end('ok');
      if (req.method === 'POST') {
        if (this.resetWrites) return void req.socket.destroy();
        res.setHeader('Content-Type', 'application/json');
        return void res.end(JSON.stringify(cm(this.rv)));
      }
      res.setHeader('Content-Type', 'application/json');
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200);
        res.write(`${JSON.stringify({ type: 'MODIFIED', object: cm(this.rv + 1) })}\n`);
        return; // stays open until the server dies or the client leaves
      }
      if (url.pathname.endsWith('/configmaps')) {
        return void res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: String(this.rv) }, items: [cm(this.rv)] }));
      }
      res.end(JSON.stringify(cm(this.rv)));
    });
  }
}

async function pair(t: { after(fn: () => Promise<void>): void }): Promise<[NamedServer, NamedServer]> {
  const a = new NamedServer('a', 10);
  const b = new NamedServer('b', 20);
  await a.start();
  await b.start();
  t.after(async () => {
    await a.stop();
    await b.stop();
  });
  return [a, b];
}

function client(t: { after(fn: () => void): void }, a: NamedServer, b: NamedServer, o: { probeIntervalMs?: number } = {}): ApiClient {
  const c = new ApiClient({ server: a.url, servers: [b.url], timeoutMs: 5_000, probeIntervalMs: o.probeIntervalMs ?? 60_000 });
  t.after(() => c.close());
  return c;
}

const served = async (c: ApiClient): Promise<string | undefined> => (await c.get(CONFIGMAPS, 'cm', { namespace: 'default' })).data?.server;

test('a read fails over to the next server when the current one is dead, and stays there', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b);
  assert.equal(await served(c), 'a');
  await a.stop();
  assert.equal(await served(c), 'b', 'the read that found a dead went to b');
  assert.equal(c.server, `${b.url}/`);
  await a.start();
  const before = a.seen.length;
  assert.equal(await served(c), 'b', 'sticky: a being back does not move the client without the probe');
  assert.equal(a.seen.length, before);
});

test('a write that could not connect is sent once, to the next server', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b);
  await a.stop();
  const created = await c.create(CONFIGMAPS, { metadata: { name: 'cm', namespace: 'default' } });
  assert.equal(created.data?.server, 'b');
  assert.equal(b.seen.filter((r) => r.method === 'POST').length, 1);
  assert.equal(a.seen.filter((r) => r.method === 'POST').length, 0);
});

test('a write whose connection died after sending is not re-sent, but the next call goes to the next server', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b);
  a.resetWrites = true;
  await assert.rejects(c.create(CONFIGMAPS, { metadata: { name: 'cm', namespace: 'default' } }), (e) => hasCode(e, 'ERR_UNAVAILABLE'));
  assert.equal(a.seen.filter((r) => r.method === 'POST').length, 1);
  assert.equal(b.seen.filter((r) => r.method === 'POST').length, 0, 'the write may have applied on a: not sent to b by the client');
  assert.equal(c.server, `${b.url}/`);
  assert.equal((await c.create(CONFIGMAPS, { metadata: { name: 'cm', namespace: 'default' } })).data?.server, 'b', "the caller's retry lands on b");
});

test('the /readyz probe brings the client back to its first server once that one is up', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b, { probeIntervalMs: 20 });
  await a.stop();
  assert.equal(await served(c), 'b');
  await a.start();
  await pollUntil('client back on a', () => c.server === `${a.url}/`, { timeoutMs: 3_000, intervalMs: 10 });
  assert.ok(a.seen.some((r) => r.path === '/readyz'));
  assert.equal(await served(c), 'a');
});

test('with every server down a call fails with ERR_UNAVAILABLE; it works again when one is back', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b);
  await a.stop();
  await b.stop();
  await assert.rejects(served(c), (e) => hasCode(e, 'ERR_UNAVAILABLE'));
  await b.start();
  assert.equal(await served(c), 'b');
});

test('an informer re-watches on the next server from its last resourceVersion, without a relist', async (t) => {
  const [a, b] = await pair(t);
  const c = client(t, a, b);
  const informer = new Informer<ConfigMap>({ client: c, resource: CONFIGMAPS, namespace: 'default', backoff: { initialMs: 10, maxMs: 50 } });
  t.after(() => informer.close());
  informer.start();
  await informer.waitForSync();
  // a's list is at rv 10, its watch sends rv 11.
  await pollUntil('watch event from a', () => informer.lastSyncResourceVersion === '11', { timeoutMs: 3_000, intervalMs: 10 });
  await a.stop();
  await pollUntil('watch on b', () => b.seen.some((r) => r.query.get('watch') === 'true'), { timeoutMs: 3_000, intervalMs: 10 });
  const onB = b.seen.filter((r) => r.path.endsWith('/configmaps'));
  assert.deepEqual(onB.map((r) => [r.query.get('watch'), r.query.get('resourceVersion')]), [['true', '11']], 'one watch from rv 11, no list');
  await pollUntil('event from b', () => informer.get('default/cm')?.data?.server === 'b', { timeoutMs: 3_000, intervalMs: 10 });
});
