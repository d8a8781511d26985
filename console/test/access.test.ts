// The console's access check (access.ts) against a real loopback server that scripts each reply:
// a dropped connection, a 503 and a 429 are asked again until the review answers; a 403 or an
// answer of "not allowed" ends it at once; an abort ends the wait.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { createApi } from '../src/api.js';
import { canI } from '../src/access.js';

/** `when`: the reply waits for it (to order it after something the test does). */
type Reply = 'drop' | { status: number; body?: unknown; when?: Promise<void> } | 'hold';

async function scriptedServer(replies: Reply[]): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${(JSON.parse(body) as { spec: { resourceAttributes: { verb: string } } }).spec.resourceAttributes.verb}`);
      const reply = replies.shift() ?? 'hold';
      if (reply === 'drop') return void req.socket.destroy();
      if (reply === 'hold') return;
      if (reply.when) return void reply.when.then(() => res.writeHead(reply.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply.body ?? { kind: 'Status', message: `status ${reply.status}` })));
      res.writeHead(reply.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply.body ?? { kind: 'Status', message: `status ${reply.status}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const review = (allowed: boolean) => ({ status: 201, body: { kind: 'SelfSubjectAccessReview', status: { allowed } } });
const attributes = { namespace: 'default', verb: 'create', group: 'apps', resource: 'deployments' };

test('a dropped connection, a 503 and a 429 are asked again until the review answers', async (t) => {
  const srv = await scriptedServer(['drop', { status: 503 }, { status: 429 }, review(true)]);
  t.after(() => srv.close());
  assert.equal(await canI(createApi('tok', srv.url), attributes, AbortSignal.timeout(10_000), 5), true);
  assert.deepEqual(srv.seen, Array(4).fill('POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews create'));
});

test('a refusal (403) and a review that does not allow are answers: asked once', async (t) => {
  for (const reply of [{ status: 403 }, review(false)]) {
    const srv = await scriptedServer([reply, review(true)]);
    t.after(() => srv.close());
    assert.equal(await canI(createApi('tok', srv.url), attributes, AbortSignal.timeout(10_000), 5), false);
    assert.equal(srv.seen.length, 1);
  }
});

test('an abort while it waits to ask again ends it with no answer', async (t) => {
  const srv = await scriptedServer([{ status: 503 }]);
  t.after(() => srv.close());
  const ac = new AbortController();
  const asked = canI(createApi('tok', srv.url), attributes, ac.signal, 60_000);
  await pollUntil('the first review to be answered 503', () => srv.seen.length === 1, { timeoutMs: 10_000, intervalMs: 5 });
  ac.abort();
  assert.equal(await asked, undefined);
});

test('an abort that comes before the pause begins (the request still out) ends it at once, not after the pause', async (t) => {
  const ac = new AbortController();
  let aborted!: () => void;
  const srv = await scriptedServer([{ status: 503, when: new Promise<void>((r) => (aborted = r)) }]);
  t.after(() => srv.close());
  const asked = canI(createApi('tok', srv.url), attributes, ac.signal, 60_000);
  await pollUntil('the review to arrive', () => srv.seen.length === 1, { timeoutMs: 10_000, intervalMs: 5 });
  ac.abort();
  aborted();
  const late = new Promise<'late'>((r) => setTimeout(r, 5000, 'late').unref());
  assert.equal(await Promise.race([asked, late]), undefined);
});
