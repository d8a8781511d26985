// The binding cycle against an API server: assumed pods count while their bindings are in
// flight, and a failed binding forgets the assumed pod and retries it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, NODES, PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startScheduler } from './index.js';
import { makeNode, makePod } from './testing/objects.js';

function strip(p: Pod): Pod {
  return { ...p, metadata: { ...p.metadata, uid: undefined }, status: undefined };
}

const WAIT = { timeoutMs: 8000, intervalMs: 25 };

test('pods scheduled while earlier bindings are in flight see them: two 3-CPU pods on two 4-CPU nodes land apart', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  for (const n of ['n1', 'n2']) server.seed(NODES, makeNode(n, { cpu: '4' }));
  // Both pending before the scheduler starts: one scheduling slice decides both before either binding returns.
  for (const name of ['a', 'b']) server.seed(PODS, strip(makePod(name, { cpu: '3' })));
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal, random: () => 0 });
  t.after(() => sched.close());
  const nodes = await pollUntil('both bound', async () => {
    const l = await client.resource(PODS, 'default').list();
    return l.items.every((p) => p.spec?.nodeName) ? l.items.map((p) => p.spec!.nodeName) : undefined;
  }, WAIT);
  assert.deepEqual(new Set(nodes), new Set(['n1', 'n2']));
});

test('a failed binding forgets the assumed pod, reports it, and the retry binds it', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  server.seed(NODES, makeNode('n1', { cpu: '4' }));
  server.failNext({ method: 'POST', path: /\/pods\/big\/binding$/ }, { code: 500, message: 'etcd hiccup' });
  const bound: string[] = [];
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal, onBound: (p, node) => bound.push(`${p.metadata.name}@${node}`) });
  t.after(() => sched.close());
  await client.resource(PODS, 'default').create(strip(makePod('big', { cpu: '3' })));

  const ev = await pollUntil('binding rejected event', async () => (await client.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'FailedScheduling'), WAIT);
  assert.match(ev.message ?? '', /^Binding rejected: .*etcd hiccup/);
  // Had the 3 CPUs stayed assumed on n1, the retry would not fit (or would be skipped as already assumed).
  const node = await pollUntil('bound after retry', async () => (await client.resource(PODS, 'default').get('big')).spec?.nodeName || undefined, WAIT);
  assert.equal(node, 'n1');
  assert.equal(server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/big/binding')).length, 2);
  assert.deepEqual(bound, ['big@n1']);
});

test('a binding answered 409 (bound by someone else) is not retried', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  server.seed(NODES, makeNode('n1'));
  server.failNext({ method: 'POST', path: /\/pods\/taken\/binding$/ }, { code: 409, reason: 'Conflict', message: 'pod taken is already assigned to node "other"' });
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal });
  t.after(() => sched.close());
  await client.resource(PODS, 'default').create(strip(makePod('taken')));
  // A later pod binding proves the scheduler moved on; the conflicted one got exactly one attempt.
  await pollUntil('binding attempted', async () => (server.requests.some((r) => r.path.endsWith('/taken/binding')) ? true : undefined), WAIT);
  await client.resource(PODS, 'default').create(strip(makePod('marker')));
  await pollUntil('marker bound', async () => (await client.resource(PODS, 'default').get('marker')).spec?.nodeName || undefined, WAIT);
  await sched.close();
  assert.equal(server.requests.filter((r) => r.path.endsWith('/taken/binding')).length, 1);
  assert.equal((await client.resource(PODS, 'default').get('taken')).spec?.nodeName, undefined);
});
