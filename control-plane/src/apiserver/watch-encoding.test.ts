// Watch events are encoded once for all their watchers, per media type, and protobuf get/list/watch
// is served to clients that prefer it. A real server over SQLite on port 0.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { decodeProtobufList, decodeProtobufObject, parseWatchFrames } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer } from './testing/test-server.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf, application/json';

interface Seen {
  type: string;
  object: { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } };
}

async function* jsonLines(body: AsyncIterable<Buffer>): AsyncGenerator<unknown> {
  let buf = '';
  for await (const chunk of body) {
    buf += chunk.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      yield JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
}

/** Opens a watch and collects its events (JSON lines or protobuf frames, by the reply's Content-Type). */
async function openWatch(base: string, path: string, accept: string | undefined, ac: AbortController): Promise<{ events: Seen[]; contentType: string }> {
  const r = await fetch(base + path, { headers: { Authorization: `Bearer ${TOKEN}`, ...(accept ? { Accept: accept } : {}) }, signal: ac.signal });
  assert.equal(r.status, 200);
  const contentType = r.headers.get('content-type') ?? '';
  const events: Seen[] = [];
  const body = Readable.fromWeb(r.body! as import('node:stream/web').ReadableStream<Uint8Array>);
  const source = contentType.startsWith('application/vnd.kubernetes.protobuf') ? parseWatchFrames(body, path) : jsonLines(body);
  void (async () => {
    try {
      for await (const e of source) events.push(e as unknown as Seen);
    } catch (err) {
      if (!ac.signal.aborted) throw err;
    }
  })();
  return { events, contentType };
}

describe('watch event encoding', () => {
  for (const share of [true, false]) {
    it(`one event to 20 JSON and 10 protobuf watchers is encoded ${share ? 'once per media type' : 'per watcher without the cache'}`, async (t) => {
      const srv = await startTestApiServer({ watchEncodeCache: share });
      const { server, url: base } = srv;
      const ac = new AbortController();
      t.after(async () => {
        ac.abort();
        await srv.close();
      });
      const rv = (await (await fetch(`${base}/api/v1/namespaces/default/configmaps`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { metadata: { resourceVersion: string } };
      const from = `resourceVersion=${rv.metadata.resourceVersion}`;
      const json = await Promise.all([...Array(15).keys()].map(() => openWatch(base, `/api/v1/namespaces/default/configmaps?watch=true&${from}`, undefined, ac)));
      // Selected by label: these see the label change below as a DELETED (the object left their selector).
      const selected = await Promise.all([...Array(5).keys()].map(() => openWatch(base, `/api/v1/namespaces/default/configmaps?watch=true&${from}&labelSelector=tier%3Dweb`, undefined, ac)));
      const proto = await Promise.all([...Array(10).keys()].map(() => openWatch(base, `/api/v1/namespaces/default/configmaps?watch=true&${from}`, PROTOBUF, ac)));
      assert.ok(proto.every((w) => w.contentType === 'application/vnd.kubernetes.protobuf;stream=watch'));
      assert.ok(json.every((w) => w.contentType === 'application/json'));
      const encoder = server.context.watchEncoder!;
      const before = encoder.encodes;

      assert.equal((await srv.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c1', labels: { tier: 'web' } }, data: { k: 'v' } })).status, 201);
      await pollUntil('every watcher to see the ADDED event', () => [...json, ...selected, ...proto].every((w) => w.events.length === 1), { timeoutMs: 10_000 });
      assert.equal(encoder.encodes - before, share ? 2 : 30);

      const patched = await fetch(`${base}/api/v1/namespaces/default/configmaps/c1`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/merge-patch+json' },
        body: JSON.stringify({ metadata: { labels: { tier: 'db' } } }),
      });
      assert.equal(patched.status, 200);
      const newRV = ((await patched.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      await pollUntil('every watcher to see the change', () => [...json, ...selected, ...proto].every((w) => w.events.length === 2), { timeoutMs: 10_000 });
      // MODIFIED as JSON and as protobuf, and one DELETED (the old state at the new RV) shared by the selected watchers.
      assert.equal(encoder.encodes - before, share ? 5 : 60);
      for (const w of [...json, ...proto]) assert.deepEqual(w.events.map((e) => [e.type, e.object.metadata.labels?.tier]), [['ADDED', 'web'], ['MODIFIED', 'db']]);
      for (const w of selected) {
        assert.deepEqual(w.events.map((e) => [e.type, e.object.metadata.labels?.tier, e.object.metadata.resourceVersion === newRV]), [['ADDED', 'web', false], ['DELETED', 'web', true]]);
      }
    });
  }
});

describe('protobuf get and list', () => {
  let env: TestApiServer;
  before(async () => {
    env = await startTestApiServer({ watchEncodeCache: true });
  });
  after(() => env?.close());
  const get = (path: string, accept?: string): Promise<Response> => fetch(env.url + path, { headers: { Authorization: `Bearer ${TOKEN}`, ...(accept ? { Accept: accept } : {}) } });

  it('answers protobuf to a client that prefers it, JSON to everyone else', async () => {
    assert.equal((await env.call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'p1' }, data: { a: 'b' } })).status, 201);
    const one = await get('/api/v1/namespaces/default/configmaps/p1', PROTOBUF);
    assert.equal(one.headers.get('content-type'), 'application/vnd.kubernetes.protobuf');
    const decoded = decodeProtobufObject(new Uint8Array(await one.arrayBuffer())).object;
    const asJson = (await (await get('/api/v1/namespaces/default/configmaps/p1')).json()) as Record<string, unknown>;
    assert.deepEqual(decoded, asJson);

    const list = await get('/api/v1/namespaces/default/configmaps', PROTOBUF);
    assert.equal(list.headers.get('content-type'), 'application/vnd.kubernetes.protobuf');
    const decodedList = decodeProtobufList(new Uint8Array(await list.arrayBuffer()));
    const jsonList = (await (await get('/api/v1/namespaces/default/configmaps', 'application/json')).json()) as { metadata: unknown; items: unknown[] };
    assert.equal(decodedList.kind, 'ConfigMapList');
    assert.deepEqual(decodedList.items, jsonList.items);
    assert.deepEqual(decodedList.metadata, jsonList.metadata);
    // A Pod as the server stores it (defaults, service-account volume, status) travels as protobuf too.
    assert.equal((await env.call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'busybox:1', ports: [{ containerPort: 80 }] }] } })).status, 201);
    const pod = await get('/api/v1/namespaces/default/pods/plain', PROTOBUF);
    assert.equal(pod.headers.get('content-type'), 'application/vnd.kubernetes.protobuf');
    assert.deepEqual(decodeProtobufObject(new Uint8Array(await pod.arrayBuffer())).object, await (await get('/api/v1/namespaces/default/pods/plain')).json());
    // JSON first in Accept (or a higher q) keeps JSON.
    assert.equal((await get('/api/v1/namespaces/default/configmaps/p1', 'application/json, application/vnd.kubernetes.protobuf')).headers.get('content-type'), 'application/json');
    assert.equal((await get('/api/v1/namespaces/default/configmaps/p1', 'application/vnd.kubernetes.protobuf;q=0.5, application/json')).headers.get('content-type'), 'application/json');
  });

  it('answers JSON for kinds and objects the tables cannot carry, 406 when JSON is not acceptable', async () => {
    // Events have no table.
    const events = await get('/api/v1/namespaces/default/events', PROTOBUF);
    assert.equal(events.status, 200);
    assert.equal(events.headers.get('content-type'), 'application/json');
    assert.equal((await get('/api/v1/namespaces/default/events', 'application/vnd.kubernetes.protobuf')).status, 406);
    // A Pod holding a field the Pod table lacks (spec.os) is answered in JSON, alone and in a list.
    const pod = { metadata: { name: 'p-os' }, spec: { os: { name: 'linux' }, containers: [{ name: 'c', image: 'busybox:1' }] } };
    assert.equal((await env.call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    assert.equal((await get('/api/v1/namespaces/default/pods/p-os', PROTOBUF)).headers.get('content-type'), 'application/json');
    assert.equal((await get('/api/v1/namespaces/default/pods', PROTOBUF)).headers.get('content-type'), 'application/json');
    assert.equal((await get('/api/v1/namespaces/default/pods/p-os', 'application/vnd.kubernetes.protobuf')).status, 406);
    // A protobuf watch cannot switch to JSON mid-stream: it ends with 410 Expired, so the client lists again (in JSON) and loses nothing.
    const listed = (await (await get('/api/v1/namespaces/default/pods')).json()) as { metadata: { resourceVersion: string } };
    const ac = new AbortController();
    try {
      const w = await openWatch(env.url, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${listed.metadata.resourceVersion}`, PROTOBUF, ac);
      assert.equal((await env.call('POST', '/api/v1/namespaces/default/pods', { ...pod, metadata: { name: 'p-os-2' } })).status, 201);
      await pollUntil('the watch to end with an error', () => w.events.length > 0, { timeoutMs: 10_000 });
      const e = w.events[0] as unknown as { type: string; object: { kind: string; code: number; reason: string } };
      assert.deepEqual([e.type, e.object.kind, e.object.code, e.object.reason], ['ERROR', 'Status', 410, 'Expired']);
    } finally {
      ac.abort();
    }
  });
});

describe('media negotiation', () => {
  it('picks protobuf only when preferred over JSON, for kinds with a complete table', async () => {
    const { negotiateWireMedia } = await import('./wire-media.js');
    const pb = 'application/vnd.kubernetes.protobuf';
    assert.deepEqual(negotiateWireMedia(`${pb}, application/json`, 'v1', 'Pod'), { media: 'protobuf', jsonAcceptable: true });
    assert.deepEqual(negotiateWireMedia(pb, 'v1', 'Pod'), { media: 'protobuf', jsonAcceptable: false });
    assert.equal(negotiateWireMedia(undefined, 'v1', 'Pod').media, 'json');
    assert.equal(negotiateWireMedia('*/*', 'v1', 'Pod').media, 'json');
    assert.equal(negotiateWireMedia(`application/json, ${pb}`, 'v1', 'Pod').media, 'json');
    assert.equal(negotiateWireMedia(`${pb};q=0.5, application/json;q=0.9`, 'v1', 'Pod').media, 'json');
    // A protobuf Table is not served: JSON it is.
    assert.equal(negotiateWireMedia(`${pb};as=Table;v=v1;g=meta.k8s.io, application/json`, 'v1', 'Pod').media, 'json');
    // Workload tables hold only what kubectl sends: JSON even when protobuf is preferred.
    assert.equal(negotiateWireMedia(`${pb}, application/json`, 'apps/v1', 'Deployment').media, 'json');
    assert.throws(() => negotiateWireMedia(pb, 'v1', 'Node'), (e: Error & { code?: number }) => /NotAcceptable|only the following/.test(e.message));
  });
});
