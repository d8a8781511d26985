import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hasCode, isAbortError, isAgentError, pollUntil } from '@nodelet/base';
import { InMemoryApiServer } from '../testing/index.js';
import { ApiClient } from './api-client.js';
import { statusOf } from './errors.js';
import { CONFIGMAPS, DEPLOYMENTS, NAMESPACES, NODES, PODS } from '../types/resources.js';
import type { Binding, ConfigMap, Deployment, Pod, Scale, Status, WatchEvent } from '../types/index.js';
import diagnostics from 'node:diagnostics_channel';
import type { RequestDiagnostic } from './transport.js';

async function startServer(t: { after(fn: () => Promise<void>): void }, token?: string): Promise<InMemoryApiServer> {
  const s = await InMemoryApiServer.start({ token });
  t.after(() => s.close());
  return s;
}

const pod = (name: string, labels: Record<string, string> = {}, nodeName?: string): Pod => ({
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'main', image: 'busybox' }], nodeName },
});


test('create, get, list, update, patch and delete round-trip with typed resources', async (t) => {
  const s = await startServer(t, 'tok');
  const c = s.client();
  const pods = c.resource(PODS, 'default');
  const created = await pods.create(pod('a', { app: 'web' }));
  assert.equal(created.kind, 'Pod');
  assert.equal(created.apiVersion, 'v1');
  assert.ok(created.metadata.uid);
  assert.equal(created.metadata.generation, 1);
  const post = s.requests.find((r) => r.method === 'POST');
  assert.equal(post?.path, '/api/v1/namespaces/default/pods');
  assert.equal(post?.headers.authorization, 'Bearer tok');
  assert.equal(JSON.parse(post?.body ?? '{}').kind, 'Pod', 'apiVersion/kind are filled from the resource');

  await pods.create(pod('b', { app: 'db' }));
  assert.equal((await pods.get('a')).metadata.uid, created.metadata.uid);
  const web = await pods.list({ labelSelector: 'app=web' });
  assert.deepEqual(web.items.map((p) => p.metadata.name), ['a']);
  assert.ok(web.metadata.resourceVersion);

  const updated = await pods.update({ ...created, metadata: { ...created.metadata, labels: { app: 'web', v: '2' } } });
  assert.equal(updated.metadata.labels?.v, '2');
  const merged = await pods.patch('a', { metadata: { annotations: { x: 'y' } } }, { type: 'merge' });
  assert.equal(merged.metadata.annotations?.x, 'y');
  const jsonPatched = await pods.patch('a', [{ op: 'add', path: '/metadata/labels/j', value: '1' }], { type: 'json' });
  assert.equal(jsonPatched.metadata.labels?.j, '1');
  const withStatus = await pods.patchStatus('a', { status: { phase: 'Running', podIP: '10.0.0.5' } }, { type: 'merge' });
  assert.equal(withStatus.status?.phase, 'Running');
  assert.equal(s.requests.at(-1)?.path, '/api/v1/namespaces/default/pods/a/status');
  assert.equal(s.requests.at(-1)?.headers['content-type'], 'application/merge-patch+json');

  const deleted = await pods.delete('b', { propagationPolicy: 'Background', gracePeriodSeconds: 0 });
  assert.equal((deleted as Pod).metadata.name, 'b');
  assert.deepEqual(JSON.parse(s.requests.at(-1)?.body ?? '{}'), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', gracePeriodSeconds: 0 });
  await assert.rejects(pods.get('b'), (e) => hasCode(e, 'ERR_NOT_FOUND'));
});

test('cluster-scoped resources, groups, subresources and listAll pagination', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  await c.create(NAMESPACES, { metadata: { name: 'team' } });
  assert.equal(s.requests.at(-1)?.path, '/api/v1/namespaces');
  await c.create(NODES, { metadata: { name: 'n1' } });
  await c.create(DEPLOYMENTS, { metadata: { name: 'web', namespace: 'team' }, spec: { selector: { matchLabels: { app: 'web' } }, template: {} } });
  assert.equal(s.requests.at(-1)?.path, '/apis/apps/v1/namespaces/team/deployments');
  for (let i = 0; i < 5; i++) await c.create(CONFIGMAPS, { metadata: { name: `cm${i}`, namespace: 'team' }, data: { i: String(i) } } as ConfigMap);
  const all = await c.listAll(CONFIGMAPS, { namespace: 'team', limit: 2 });
  assert.deepEqual(all.items.map((cm) => cm.metadata.name), ['cm0', 'cm1', 'cm2', 'cm3', 'cm4']);
  assert.equal(s.requests.filter((r) => r.path === '/api/v1/namespaces/team/configmaps' && r.method === 'GET').length, 3);
  assert.equal(all.metadata.continue, undefined);

  await c.create(PODS, pod('p'));
  const binding: Binding = { metadata: { name: 'p', namespace: 'default' }, target: { kind: 'Node', name: 'n1' } };
  await c.create(PODS, binding, { name: 'p', subresource: 'binding' });
  assert.equal(s.requests.at(-1)?.path, '/api/v1/namespaces/default/pods/p/binding');
  assert.equal((await c.get(PODS, 'p', { namespace: 'default' })).spec?.nodeName, 'n1');
  await assert.rejects(c.resource(PODS).get('p'), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /namespaced/.test((e as Error).message));
});

test('HTTP errors become AgentErrors with the server Status, translated once', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  const pods = c.resource(PODS, 'default');
  const a = await pods.create(pod('a'));
  await assert.rejects(pods.create(pod('a')), (e) => {
    assert.ok(hasCode(e, 'ERR_ALREADY_EXISTS'));
    assert.equal(statusOf(e)?.reason, 'AlreadyExists');
    assert.equal((e as { retryable: boolean }).retryable, false);
    return true;
  });
  await pods.patch('a', { metadata: { labels: { x: '1' } } }, { type: 'merge' });
  await assert.rejects(pods.update(a), (e) => {
    assert.ok(hasCode(e, 'ERR_CONFLICT'));
    assert.equal(statusOf(e)?.code, 409);
    assert.match((e as Error).message, /the object has been modified/);
    return true;
  });
  await assert.rejects(pods.get('nope'), (e) => hasCode(e, 'ERR_NOT_FOUND') && statusOf(e)?.details?.name === 'nope');
  await assert.rejects(pods.list({ labelSelector: 'a b' }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
  s.failNext({ method: 'GET' }, { code: 503, reason: 'ServiceUnavailable' });
  await assert.rejects(pods.get('a'), (e) => hasCode(e, 'ERR_UNAVAILABLE') && (e as { retryable: boolean }).retryable);
  s.failNext({ method: 'GET' }, { code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });
  await assert.rejects(pods.get('a'), (e) => hasCode(e, 'ERR_UNAVAILABLE') && (e as { retryAfterSeconds?: number }).retryAfterSeconds === 3);
  s.failNext({ path: /\/pods\/a$/ }, { code: 403, reason: 'Forbidden' });
  await assert.rejects(pods.get('a'), (e) => hasCode(e, 'ERR_PERMISSION_DENIED'));
  s.failNext({}, { code: 410, reason: 'Expired' });
  await assert.rejects(pods.list(), (e) => hasCode(e, 'ERR_GONE'));
  s.failNext({}, { code: 422, reason: 'Invalid', details: { causes: [{ field: 'spec.containers', reason: 'FieldValueRequired' }] } });
  await assert.rejects(pods.create(pod('c')), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && statusOf(e)?.details?.causes?.[0]?.field === 'spec.containers');
});

test('a bad token is ERR_UNAUTHENTICATED', async (t) => {
  const s = await startServer(t, 'right');
  const c = s.client({ token: 'wrong' });
  await assert.rejects(c.list(PODS), (e) => hasCode(e, 'ERR_UNAUTHENTICATED') && statusOf(e)?.code === 401);
});

test('connection refused is retryable ERR_UNAVAILABLE naming the server', async () => {
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const c = new ApiClient({ server: `http://127.0.0.1:${port}` });
  await assert.rejects(c.list(PODS), (e) => {
    assert.ok(hasCode(e, 'ERR_UNAVAILABLE'));
    assert.ok((e as { retryable: boolean }).retryable);
    assert.match((e as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}`));
    return true;
  });
  c.close();
});

test('timeouts are ERR_DEADLINE_EXCEEDED; caller aborts are AbortErrors', async (t) => {
  const held: http.ServerResponse[] = [];
  const srv = http.createServer((_req, res) => void held.push(res));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const c = new ApiClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, timeoutMs: 50 });
  t.after(() => c.close());
  await assert.rejects(c.get(NODES, 'n'), (e) => hasCode(e, 'ERR_DEADLINE_EXCEEDED') && /within 50 ms/.test((e as Error).message));
  const ac = new AbortController();
  const p = c.get(NODES, 'n', { signal: ac.signal, timeoutMs: 5000 });
  setTimeout(() => ac.abort(), 10);
  await assert.rejects(p, (e) => isAbortError(e) && !isAgentError(e));
  const watchAc = new AbortController();
  const it = c.watch(NODES, { signal: watchAc.signal, timeoutMs: 5000 })[Symbol.asyncIterator]();
  const next = it.next();
  watchAc.abort();
  await assert.rejects(next, (e) => isAbortError(e));
});

test('watch yields ADDED/MODIFIED/DELETED from a resourceVersion and closes when the consumer stops', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  const pods = c.resource(PODS, 'default');
  await pods.create(pod('before'));
  const list = await pods.list();
  const seen: WatchEvent<Pod>[] = [];
  const done = (async () => {
    for await (const e of pods.watch({ resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true })) {
      seen.push(e);
      if (e.type === 'DELETED') break;
    }
  })();
  await pollUntil('watch to open', () => s.watchCount === 1, { timeoutMs: 2000, intervalMs: 5 });
  const a = await pods.create(pod('a'));
  await pods.patch('a', { metadata: { labels: { x: '1' } } }, { type: 'merge' });
  s.sendBookmarks();
  await pods.delete('a', { gracePeriodSeconds: 0 });
  await done;
  assert.deepEqual(seen.map((e) => [e.type, (e.object as Pod).metadata?.name]), [
    ['ADDED', 'a'],
    ['MODIFIED', 'a'],
    ['BOOKMARK', undefined],
    ['DELETED', 'a'],
  ]);
  assert.equal((seen[0]?.object as Pod).metadata.uid, a.metadata.uid);
  assert.equal(s.requests.at(-4)?.query.get('allowWatchBookmarks'), 'true');
  await pollUntil('watch connection to close after break', () => s.watchCount === 0, { timeoutMs: 2000, intervalMs: 5 });
});

test('watch with a field selector sees objects enter and leave it', async (t) => {
  const s = await startServer(t);
  const pods = s.client().resource(PODS);
  const seen: string[] = [];
  const ac = new AbortController();
  const done = (async () => {
    for await (const e of pods.watch({ fieldSelector: 'spec.nodeName=n1', signal: ac.signal })) {
      seen.push(`${e.type} ${(e.object as Pod).metadata?.name}`);
      if (seen.length === 2) ac.abort();
    }
  })();
  await pollUntil('watch to open', () => s.watchCount === 1, { timeoutMs: 2000, intervalMs: 5 });
  await s.client().create(PODS, pod('elsewhere', {}, 'n2'));
  await s.client().create(PODS, pod('p'));
  await s.client().create(PODS, { metadata: { name: 'p', namespace: 'default' }, target: { name: 'n1' } } as Binding, { name: 'p', subresource: 'binding' });
  await s.client().delete(PODS, 'p', { namespace: 'default', gracePeriodSeconds: 0 });
  await assert.rejects(done, (e) => isAbortError(e));
  assert.deepEqual(seen, ['ADDED p', 'DELETED p']);
});

test('watch reports 410 Expired as an ERROR event and a dropped connection as ERR_UNAVAILABLE', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  await c.create(PODS, pod('a'));
  const old = String(s.store.revision);
  await c.create(PODS, pod('b'));
  s.store.compact();
  const events: WatchEvent<Pod>[] = [];
  for await (const e of c.watch(PODS, { resourceVersion: old })) events.push(e);
  assert.equal(events.length, 1);
  assert.equal(events[0]?.type, 'ERROR');
  assert.equal((events[0]?.object as Status).code, 410);
  assert.equal((events[0]?.object as Status).reason, 'Expired');

  const dropped = (async () => {
    for await (const _ of c.watch(PODS, { resourceVersion: String(s.store.revision) })) {
      // no events expected before the drop
    }
  })();
  await pollUntil('watch to open', () => s.watchCount === 1, { timeoutMs: 2000, intervalMs: 5 });
  s.dropWatches();
  await assert.rejects(dropped, (e) => hasCode(e, 'ERR_UNAVAILABLE') && (e as { retryable: boolean }).retryable);
});

test('getRaw and stream read non-JSON endpoints', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  await c.create(PODS, pod('a'));
  s.setPodLog('default', 'a', 'line 1\nline 2\n');
  const log = await c.getRaw('/api/v1/namespaces/default/pods/a/log', { query: { container: 'main' } });
  assert.equal(log.toString(), 'line 1\nline 2\n');
  assert.equal(s.requests.at(-1)?.query.get('container'), 'main');
  const stream = await c.stream('/api/v1/namespaces/default/pods/a/log', { query: { follow: true } });
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  assert.equal(text, 'line 1\nline 2\n');
  const version = JSON.parse((await c.getRaw('/version')).toString()) as { minor: string };
  assert.equal(version.minor, '32');
});

test('a silent watch ends on the client side once timeoutSeconds (plus grace) has passed', async (t) => {
  const held: http.ServerResponse[] = [];
  const srv = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    held.push(res); // never writes an event and never ends: a half-open connection
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const c = new ApiClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, watchDeadlineGraceMs: 0 });
  t.after(() => c.close());
  const started = Date.now();
  const events: unknown[] = [];
  for await (const e of c.watch(PODS, { timeoutSeconds: 1 })) events.push(e);
  const elapsed = Date.now() - started;
  assert.deepEqual(events, []);
  assert.ok(elapsed >= 950 && elapsed < 3000, `ended after ${elapsed} ms`);
});

test('the scale subresource reads and writes replicas', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  await c.create(DEPLOYMENTS, { metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: {} } });
  const scale = await c.get<Deployment, Scale>(DEPLOYMENTS, 'web', { namespace: 'default', subresource: 'scale' });
  assert.equal(scale.kind, 'Scale');
  assert.equal(scale.spec?.replicas, 2);
  assert.equal(scale.status?.selector, 'app=web');
  const patched = await c.patch<Deployment, Scale>(DEPLOYMENTS, 'web', { spec: { replicas: 5 } }, { type: 'merge', namespace: 'default', subresource: 'scale' });
  assert.equal(patched.spec?.replicas, 5);
  const d = await c.get(DEPLOYMENTS, 'web', { namespace: 'default' });
  assert.equal(d.spec?.replicas, 5);
  assert.equal(d.metadata.generation, 2, 'a replica change is a spec change');
});

test('every request is published on the nodelet:api:request diagnostics channel', async (t) => {
  const s = await startServer(t);
  const c = s.client();
  const seen: RequestDiagnostic[] = [];
  const onMessage = (m: unknown): void => void seen.push(m as RequestDiagnostic);
  diagnostics.subscribe('nodelet:api:request', onMessage);
  t.after(() => diagnostics.unsubscribe('nodelet:api:request', onMessage));
  await c.list(PODS, { namespace: 'default' });
  await assert.rejects(c.get(PODS, 'nope', { namespace: 'default' }));
  assert.equal(seen.length, 2);
  assert.deepEqual({ ...seen[0], durationMs: 0 }, { method: 'GET', path: '/api/v1/namespaces/default/pods', statusCode: 200, durationMs: 0, stream: false });
  assert.equal(seen[1]?.statusCode, 404);
  assert.equal(seen[1]?.error, 'ERR_NOT_FOUND');
  assert.ok((seen[0]?.durationMs ?? -1) >= 0);
});

test('close() is idempotent and later calls fail with a clear error', async (t) => {
  const s = await startServer(t);
  const c = new ApiClient({ server: s.url });
  await c.list(PODS);
  c.close();
  c.close();
  await assert.rejects(c.list(PODS), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION') && /closed/.test((e as Error).message));
});

test('setToken and reloadToken: a rotated credential is used from the next request on', async (t) => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const s = await startServer(t);
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'first\n');
  const c = s.client({ tokenFile });
  const lastAuth = (): string | undefined => s.requests.at(-1)?.headers.authorization as string | undefined;
  await c.list(PODS, { namespace: 'default' });
  assert.equal(lastAuth(), 'Bearer first');
  await writeFile(tokenFile, 'second\n');
  await c.list(PODS, { namespace: 'default' });
  assert.equal(lastAuth(), 'Bearer first', 'the file is cached for a minute');
  c.reloadToken();
  await c.list(PODS, { namespace: 'default' });
  assert.equal(lastAuth(), 'Bearer second', 'reloadToken reads the file on the next request');
  c.setToken('third');
  await c.list(PODS, { namespace: 'default' });
  assert.equal(lastAuth(), 'Bearer third', 'setToken wins over the file');
});

/** A plain HTTP server that answers the first `shed` requests 429 with `retryAfter` (when given), then 201 with the request's body. */
async function sheddingServer(t: { after(fn: () => Promise<void>): void }, shed: number, retryAfter?: string): Promise<{ url: string; seen: number[] }> {
  const seen: number[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(performance.now());
      if (seen.length <= shed) {
        res.writeHead(429, { 'Content-Type': 'application/json', ...(retryAfter !== undefined ? { 'Retry-After': retryAfter } : {}) });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429, message: 'Too many requests, please try again later.' }));
        return;
      }
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

test('a 429 with Retry-After is sent again after the seconds it gives (client-go), up to maxRetries; without the header it is the caller\'s', async (t) => {
  // Shed twice, come back after 1 s: the create succeeds on the third request, a second after the first.
  const once = await sheddingServer(t, 2, '1');
  const c = new ApiClient({ server: once.url });
  t.after(() => c.close());
  const created = await c.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...pod('a') });
  assert.equal(created.metadata.name, 'a');
  assert.equal(once.seen.length, 3);
  assert.ok(once.seen[1]! - once.seen[0]! >= 990, `waited ${once.seen[1]! - once.seen[0]!} ms, not the second Retry-After asked for`);

  // Always shed: maxRetries 2 means three requests, then the 429 goes to the caller.
  const always = await sheddingServer(t, Infinity, '0');
  const limited = new ApiClient({ server: always.url, maxRetries: 2 });
  t.after(() => limited.close());
  await assert.rejects(limited.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...pod('b') }), (e) => hasCode(e, 'ERR_UNAVAILABLE') && statusOf(e)?.code === 429);
  assert.equal(always.seen.length, 3);

  // A wait past the request's deadline is not started: the 429 is the caller's, with its seconds.
  const late = await sheddingServer(t, Infinity, '2');
  const hurried = new ApiClient({ server: late.url, timeoutMs: 1500 });
  t.after(() => hurried.close());
  await assert.rejects(hurried.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...pod('d') }), (e) => statusOf(e)?.code === 429 && (e as { retryAfterSeconds?: number }).retryAfterSeconds === 2);
  assert.equal(late.seen.length, 1);

  // No Retry-After: nothing says when to come back, so no retry (client-go's checkWait).
  const bare = await sheddingServer(t, Infinity);
  const plain = new ApiClient({ server: bare.url });
  t.after(() => plain.close());
  await assert.rejects(plain.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...pod('c') }), (e) => statusOf(e)?.code === 429);
  assert.equal(bare.seen.length, 1);
});
