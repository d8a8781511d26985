// A watch over a WebSocket on a real API server with the `ws` package's client: the token as a
// subprotocol (the console's way), events one per text message, selectors, a 403 before the
// handshake, the 410 as an ERROR event, the close at timeoutSeconds, a custom resource, the
// handshake's refusals, and the audit's 101 then ResponseComplete when the client closes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWatchFrame } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { WebSocket } from 'ws';
import { parseAuditPolicy } from '../audit/policy.js';
import { widgetCrd, WIDGET_GROUP } from '../apiextensions/testing/fixtures.js';
import { BEARER_PROTOCOL_PREFIX } from '../filters/authentication.js';
import { startTestApiServer, TEST_ADMIN_TOKEN, type TestApiServer } from '../testing/test-server.js';

interface Event {
  type: string;
  object: { metadata: { name?: string; resourceVersion?: string }; code?: number; reason?: string; message?: string };
}

/** An open watch: its messages as they came, and its close. */
interface OpenWatch {
  ws: WebSocket;
  protocol: string;
  messages: { text: string; binary: boolean; bytes: Buffer }[];
  closed: Promise<{ code: number; ms: number }>;
}

const tokenProtocol = (t: string): string => BEARER_PROTOCOL_PREFIX + Buffer.from(t).toString('base64url');

describe('watch over a WebSocket', () => {
  let srv: TestApiServer;
  let dir: string;
  const audit = (): string => readFileSync(join(dir, 'audit.log'), 'utf8');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-ws-watch-'));
    srv = await startTestApiServer({
      tokens: new Map([['nobody-token', { name: 'nobody', groups: ['system:authenticated'] }]]),
      audit: { policy: parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n'), path: join(dir, 'audit.log'), rotation: { maxSizeMB: 0, maxAgeDays: 0, maxBackups: 0 } },
    });
  });
  after(async () => {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens `path` as a browser would: token and one more subprotocol, an Origin. Rejects with the refusal's status and body. */
  function open(path: string, o: { token?: string; protocols?: string[]; origin?: string | null; accept?: string } = {}): Promise<OpenWatch> {
    const protocols = [tokenProtocol(o.token ?? TEST_ADMIN_TOKEN), ...(o.protocols ?? ['watch.test'])];
    const origin = o.origin === null ? {} : { origin: o.origin ?? srv.url };
    const ws = new WebSocket(srv.url.replace(/^http/, 'ws') + path, protocols, { ...origin, ...(o.accept ? { headers: { Accept: o.accept } } : {}) });
    const messages: OpenWatch['messages'] = [];
    const opened = Date.now();
    ws.on('message', (data: Buffer, binary: boolean) => void messages.push({ text: data.toString('utf8'), binary, bytes: data }));
    const closed = new Promise<{ code: number; ms: number }>((resolve) => ws.once('close', (code) => resolve({ code, ms: Date.now() - opened })));
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve({ ws, protocol: ws.protocol, messages, closed }));
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => reject(Object.assign(new Error(`refused: ${res.statusCode}`), { status: res.statusCode, body })));
        ws.once('error', () => undefined);
      });
      ws.once('error', reject);
    });
  }
  const events = (w: OpenWatch): Event[] => w.messages.map((m) => JSON.parse(m.text) as Event);
  const named = (w: OpenWatch): string[] => events(w).filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}`);

  it('sends each event as one text message, honours the selectors, and audits 101 then the end when the client closes', async () => {
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a1', labels: { app: 'a' } } });
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'b1', labels: { app: 'b' } } });
    const w = await open('/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Da&allowWatchBookmarks=true', { protocols: ['watch.test'] });
    assert.equal(w.protocol, 'watch.test', 'the one subprotocol left after the token is echoed');
    await pollUntil('the initial ADDED', () => (named(w).includes('ADDED a1') ? true : undefined), { timeoutMs: 5000 });
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'b2', labels: { app: 'b' } } });
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a2', labels: { app: 'a' } } });
    await srv.call('PATCH', '/api/v1/namespaces/default/configmaps/b1', { metadata: { labels: { app: 'a' } } }, { contentType: 'application/merge-patch+json' });
    await srv.call('PATCH', '/api/v1/namespaces/default/configmaps/a1', { metadata: { labels: { app: 'b' } } }, { contentType: 'application/merge-patch+json' });
    await pollUntil('four events', () => (named(w).length >= 4 ? true : undefined), { timeoutMs: 5000 });
    assert.deepEqual(named(w), ['ADDED a1', 'ADDED a2', 'ADDED b1', 'DELETED a1']);
    for (const m of w.messages) {
      assert.equal(m.binary, false);
      assert.ok(m.text.endsWith('}\n') && m.text.indexOf('\n') === m.text.length - 1, m.text);
    }
    // A message from the client is ignored, as upstream's IgnoreReceives does.
    w.ws.send('hello');
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a3', labels: { app: 'a' } } });
    await pollUntil('ADDED a3', () => (named(w).includes('ADDED a3') ? true : undefined), { timeoutMs: 5000 });
    w.ws.close(1000);
    assert.equal((await w.closed).code, 1000);
    const lines = await pollUntil('the watch audited to its end', () => {
      const l = audit().split('\n').filter((x) => x.includes('"verb":"watch"') && x.includes('labelSelector=app%3Da'));
      return l.some((x) => x.includes('"stage":"ResponseComplete"')) ? l : undefined;
    }, { timeoutMs: 5000 });
    assert.ok(lines.some((x) => x.includes('"stage":"ResponseStarted"') && x.includes('"code":101')), lines.join('\n'));
    assert.ok(lines.every((x) => !x.includes(tokenProtocol(TEST_ADMIN_TOKEN).slice(BEARER_PROTOCOL_PREFIX.length))), 'the token was audited');
  });

  it('sends protobuf events as binary messages, each a bare WatchEvent without the length prefix', async () => {
    const w = await open('/api/v1/namespaces/default/configmaps?watch=true&labelSelector=proto%3Dyes', { accept: 'application/vnd.kubernetes.protobuf, application/json' });
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'p1', labels: { proto: 'yes' } } });
    await pollUntil('one event', () => (w.messages.length >= 1 ? true : undefined), { timeoutMs: 5000 });
    assert.equal(w.messages[0]!.binary, true);
    const ev = decodeWatchFrame(w.messages[0]!.bytes, 'configmaps');
    assert.equal(ev.type, 'ADDED');
    assert.equal((ev.object.metadata as { name?: string }).name, 'p1');
    w.ws.close(1000);
    await w.closed;
  });

  it('refuses a user without watch with the 403 before the handshake', async () => {
    await assert.rejects(open('/api/v1/namespaces/default/pods?watch=true', { token: 'nobody-token' }), (err: { status: number; body: string }) => {
      assert.equal(err.status, 403);
      const status = JSON.parse(err.body) as { reason: string; message: string };
      assert.equal(status.reason, 'Forbidden');
      assert.equal(status.message, 'pods is forbidden: User "nobody" cannot watch resource "pods" in API group "" in the namespace "default"');
      return true;
    });
  });

  it('sends a compacted resourceVersion as the 410 ERROR event, then closes', async () => {
    const before = Number((await srv.call('GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion);
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'gone1' } });
    await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'gone2' } });
    await srv.store.compact(await srv.store.currentRevision());
    const w = await open(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${before}`);
    assert.equal((await w.closed).code, 1000);
    const ev = events(w);
    assert.equal(ev.length, 1, JSON.stringify(ev));
    assert.equal(ev[0]!.type, 'ERROR');
    assert.deepEqual([ev[0]!.object.code, ev[0]!.object.reason], [410, 'Expired']);
    assert.match(ev[0]!.object.message ?? '', /^too old resource version: /);
  });

  it('closes cleanly (1000) at timeoutSeconds', async () => {
    const w = await open('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&labelSelector=none%3Dnone');
    const { code, ms } = await w.closed;
    assert.equal(code, 1000);
    assert.ok(ms >= 900 && ms < 5000, `closed after ${ms} ms`);
  });

  it('watches a custom resource', async () => {
    assert.equal((await srv.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd())).status, 201);
    const path = `/apis/${WIDGET_GROUP}/v1/namespaces/default/widgets`;
    await pollUntil('widgets served', async () => ((await srv.call('GET', path)).status === 200 ? true : undefined), { timeoutMs: 10_000 });
    const w = await open(`${path}?watch=true`);
    assert.equal((await srv.call('POST', path, { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { image: 'busybox' } })).status, 201);
    await pollUntil('ADDED w1', () => (named(w).includes('ADDED w1') ? true : undefined), { timeoutMs: 5000 });
    w.ws.close(1000);
    await w.closed;
  });

  it('refuses the handshake as x/net/websocket does: no Origin (403), two subprotocols (400)', async () => {
    const refusal = (p: Promise<OpenWatch>): Promise<number> => p.then(() => 0, (err: { status: number }) => err.status);
    assert.equal(await refusal(open('/api/v1/namespaces/default/configmaps?watch=true', { origin: null })), 403);
    assert.equal(await refusal(open('/api/v1/namespaces/default/configmaps?watch=true', { protocols: ['one', 'two'] })), 400);
    // Not a watch: a plain list is no upgrade target.
    assert.equal(await refusal(open('/api/v1/namespaces/default/configmaps')), 404);
  });
});
