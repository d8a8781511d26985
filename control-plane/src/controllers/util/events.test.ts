import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { EventRecorder } from './events.js';

test('a repeated event bumps count and lastTimestamp of the first one', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const rec = new EventRecorder({ client, component: 'default-scheduler', instance: 'test', clock, logger: noopLogger });
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1', resourceVersion: '7' }, spec: { containers: [] } };
  await rec.record(pod, 'Warning', 'FailedScheduling', 'no fit');
  clock.advance(5_000);
  await rec.record(pod, 'Warning', 'FailedScheduling', 'no fit');
  await rec.record(pod, 'Warning', 'FailedScheduling', 'another message');
  const events = (await client.resource(EVENTS, 'default').list()).items.sort((a, b) => (a.message! < b.message! ? -1 : 1));
  assert.equal(events.length, 2);
  const e = events.find((x) => x.message === 'no fit')!;
  assert.equal(e.count, 2);
  assert.equal(e.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(e.lastTimestamp, '2026-01-01T00:00:05Z');
  assert.match(e.metadata.name!, /^p\.[0-9a-f]+$/);
  assert.deepEqual(e.involvedObject, { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1', resourceVersion: '7' });
  assert.deepEqual([e.source?.component, e.reportingComponent, e.reportingInstance, e.type], ['default-scheduler', 'default-scheduler', 'test', 'Warning']);
});

test('recording never throws when the API rejects the write', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  server.failNext({ method: 'POST' }, { code: 500 });
  const rec = new EventRecorder({ client: server.client(), component: 'x', logger: noopLogger });
  await rec.record({ metadata: { name: 'n', namespace: 'default', uid: 'u' } }, 'Normal', 'R', 'm');
});
