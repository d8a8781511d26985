import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, systemClock } from '@nodelet/base';
import { PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ApiPodSource } from './pod-source.js';

async function until(what: string, fn: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const pod = (name: string, nodeName: string): Pod => ({ metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [{ name: 'c', image: 'x' }] } });

test('pod source: lists and watches only this node’s pods, relists after 410, re-watches after a dropped connection', async (t) => {
  const api = await InMemoryApiServer.start();
  const stop = new AbortController();
  t.after(async () => {
    stop.abort();
    await api.close();
  });
  api.seed(PODS, pod('mine-1', 'n1'));
  api.seed(PODS, pod('other', 'n2'));
  const syncs: string[][] = [];
  const upserts: string[] = [];
  const removes: string[] = [];
  const src = new ApiPodSource({ api: api.client(), nodeName: 'n1', clock: systemClock, log: noopLogger, random: () => 0 });
  const running = src.run(stop.signal, {
    onSync: (ps) => syncs.push(ps.map((p) => p.metadata.name!)),
    onUpsert: (p) => upserts.push(p.metadata.name!),
    onRemove: (p) => removes.push(p.metadata.name!),
  });
  await until('first list', () => syncs.length === 1 && api.watchCount === 1);
  assert.deepEqual(syncs[0], ['mine-1']);
  const client = api.client();
  await client.create(PODS, pod('mine-2', 'n1'));
  await client.create(PODS, pod('other-2', 'n2'));
  await until('watch event', () => upserts.includes('mine-2'));
  assert.ok(!upserts.includes('other-2'), 'other nodes are not seen');
  api.expireWatches();
  await until('relist after 410', () => syncs.length === 2);
  assert.deepEqual(syncs[1]!.sort(), ['mine-1', 'mine-2']);
  api.dropWatches();
  await until('re-watch', () => api.watchCount === 1, 10_000);
  await client.delete(PODS, 'mine-1', { namespace: 'default', gracePeriodSeconds: 0 });
  await until('delete event', () => removes.includes('mine-1'));
  assert.equal(syncs.length, 2, 'a dropped connection re-watches from the last version without a relist');
  stop.abort();
  await running;
});
