import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { hasCode } from '@nodelet/base';
import { ApiClient } from './api-client.js';
import { CONFIGMAPS } from '../types/resources.js';
import type { ConfigMap, WatchEvent } from '../types/index.js';
import { encodeProtobufList, encodeProtobufMessage, encodeProtobufObject, encodeWatchFrame, protobufEnvelope } from '../protobuf/encode.js';

const cm = (name: string, rv: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: rv }, data: { k: name } });

/** A ConfigMap whose message carries field 99, which our tables lack (a newer server's field). */
function futureConfigMap(name: string): Uint8Array {
  const raw = encodeProtobufMessage('v1', 'ConfigMap', { metadata: { name, namespace: 'default', resourceVersion: '9' } })!;
  const w = protobuf.Writer.create();
  w.raw(raw);
  w.uint32((99 << 3) | 2).string('future');
  return w.finish();
}

interface Seen {
  accept: string | undefined;
  watch: boolean;
}

async function serve(t: { after(fn: () => Promise<void>): void }, future: boolean): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const watch = new URL(req.url!, 'http://x').searchParams.get('watch') === 'true';
    seen.push({ accept: req.headers.accept, watch });
    const protobufWanted = req.headers.accept?.startsWith('application/vnd.kubernetes.protobuf');
    if (!protobufWanted) {
      if (watch) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ type: 'ADDED', object: cm('from-json', '10') }) + '\n');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '8' }, items: [cm('from-json', '8')] }));
      }
      return;
    }
    if (watch) {
      res.writeHead(200, { 'Content-Type': 'application/vnd.kubernetes.protobuf;stream=watch' });
      res.write(encodeWatchFrame('ADDED', encodeProtobufObject(cm('a', '5'))!));
      const last = future ? protobufEnvelope('v1', 'ConfigMap', futureConfigMap('b')) : encodeProtobufObject(cm('b', '6'))!;
      res.end(encodeWatchFrame('MODIFIED', last));
      return;
    }
    const items = future ? [futureConfigMap('a')] : [encodeProtobufMessage('v1', 'ConfigMap', cm('a', '3'))!];
    res.writeHead(200, { 'Content-Type': 'application/vnd.kubernetes.protobuf' });
    res.end(encodeProtobufList('v1', 'ConfigMap', { resourceVersion: '4' }, items));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

test('with protobuf on, list and watch ask for it as kubelet does and decode the frames', async (t) => {
  const { url, seen } = await serve(t, false);
  const c = new ApiClient({ server: url, protobuf: true });
  t.after(() => c.close());
  const list = await c.list(CONFIGMAPS, { namespace: 'default' });
  assert.deepEqual(list.metadata, { resourceVersion: '4' });
  assert.deepEqual(list.items, [cm('a', '3')]);
  const events: WatchEvent<ConfigMap>[] = [];
  for await (const e of c.watch(CONFIGMAPS, { namespace: 'default', resourceVersion: '4' })) events.push(e);
  assert.deepEqual(events, [{ type: 'ADDED', object: cm('a', '5') }, { type: 'MODIFIED', object: cm('b', '6') }]);
  assert.deepEqual(seen.map((s) => s.accept), ['application/vnd.kubernetes.protobuf, application/json', 'application/vnd.kubernetes.protobuf, application/json']);
  // Off by default: JSON only.
  const plain = new ApiClient({ server: url });
  t.after(() => plain.close());
  await plain.list(CONFIGMAPS, { namespace: 'default' });
  assert.equal(seen.at(-1)?.accept, 'application/json');
});

test('a protobuf reply with fields our tables lack switches that resource to JSON, losing nothing', async (t) => {
  const { url, seen } = await serve(t, true);
  const c = new ApiClient({ server: url, protobuf: true });
  t.after(() => c.close());
  // The list is asked again as JSON at once.
  const list = await c.list(CONFIGMAPS, { namespace: 'default' });
  assert.deepEqual(list.items.map((i) => i.metadata.name), ['from-json']);
  assert.deepEqual(seen.map((s) => s.accept), ['application/vnd.kubernetes.protobuf, application/json', 'application/json']);
  // The watch asks for JSON now too.
  const events: string[] = [];
  for await (const e of c.watch(CONFIGMAPS, { namespace: 'default' })) events.push((e.object as ConfigMap).metadata.name!);
  assert.deepEqual(events, ['from-json']);
  assert.equal(seen.at(-1)?.accept, 'application/json');
});

test('a watch that meets an undecodable event ends retryably and the next watch asks for JSON', async (t) => {
  const { url, seen } = await serve(t, true);
  const c = new ApiClient({ server: url, protobuf: true });
  t.after(() => c.close());
  const events: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of c.watch(CONFIGMAPS, { namespace: 'default' })) events.push((e.object as ConfigMap).metadata.name!);
    })(),
    (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && /switching to JSON/.test(err.message),
  );
  assert.deepEqual(events, ['a']);
  for await (const e of c.watch(CONFIGMAPS, { namespace: 'default' })) events.push((e.object as ConfigMap).metadata.name!);
  assert.deepEqual(events, ['a', 'from-json']);
  assert.deepEqual(seen.map((s) => s.accept), ['application/vnd.kubernetes.protobuf, application/json', 'application/json']);
});
