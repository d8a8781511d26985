import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { InMemoryApiServer } from '../testing/index.js';
import { EVENTS, type Event, type Pod } from '../types/index.js';
import { EventRecorder } from './recorder.js';

const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: 'u1', resourceVersion: '7' }, spec: { containers: [] } };
const byMessage = (a: Event, b: Event): number => (a.message! < b.message! ? -1 : 1);

test('a repeat within 10 minutes bumps count and lastTimestamp of the first Event; after that a new one is made', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const rec = new EventRecorder({ client, component: 'default-scheduler', instance: 'test', clock, logger: noopLogger });
  await rec.record(pod, 'Warning', 'FailedScheduling', 'no fit');
  clock.advance(5_000);
  await rec.record(pod, 'Warning', 'FailedScheduling', 'no fit');
  await rec.record(pod, 'Warning', 'FailedScheduling', 'another message');
  const events = (await client.resource(EVENTS, 'default').list()).items.sort(byMessage);
  assert.equal(events.length, 2);
  const e = events.find((x) => x.message === 'no fit')!;
  assert.equal(e.count, 2);
  assert.equal(e.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(e.lastTimestamp, '2026-01-01T00:00:05Z');
  assert.match(e.metadata.name!, /^p\.[0-9a-f]+$/);
  assert.deepEqual(e.involvedObject, { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1', resourceVersion: '7' });
  assert.deepEqual([e.source, e.reportingComponent, e.reportingInstance, e.type], [{ component: 'default-scheduler' }, 'default-scheduler', 'test', 'Warning']);
  clock.advance(10 * 60_000);
  await rec.record(pod, 'Warning', 'FailedScheduling', 'no fit');
  assert.equal((await client.resource(EVENTS, 'default').list()).items.filter((x) => x.message === 'no fit').length, 2);
});

test('kubelet events carry the node as source host and reporting instance, and the container as fieldPath', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const rec = new EventRecorder({ client, component: 'kubelet', host: 'node-1', clock: new FakeClock(), logger: noopLogger });
  await rec.record(pod, 'Normal', 'Pulled', 'pulled', { fieldPath: 'spec.containers{app}' });
  await rec.record(pod, 'Normal', 'Pulled', 'pulled', { fieldPath: 'spec.containers{side}' });
  const events = (await client.resource(EVENTS, 'default').list()).items;
  assert.deepEqual(events.map((e) => e.involvedObject.fieldPath).sort(), ['spec.containers{app}', 'spec.containers{side}'], 'two containers are two Events');
  assert.deepEqual([events[0]!.source, events[0]!.reportingInstance], [{ component: 'kubelet', host: 'node-1' }, 'node-1']);
});

test('recording never throws: a rejected write is dropped, and the next repeat creates the Event afresh', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const rec = new EventRecorder({ client, component: 'x', logger: noopLogger });
  server.failNext({ method: 'POST' }, { code: 500 });
  await rec.record({ metadata: { name: 'n', namespace: 'default', uid: 'u' } }, 'Normal', 'R', 'm');
  assert.equal((await client.resource(EVENTS, 'default').list()).items.length, 0);
  await rec.record({ metadata: { name: 'n', namespace: 'default', uid: 'u' } }, 'Normal', 'R', 'm');
  assert.equal((await client.resource(EVENTS, 'default').list()).items[0]?.count, 1);
});

test('the queue is bounded (oldest dropped) and close() drops what is left', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const rec = new EventRecorder({ client, component: 'x', logger: noopLogger, maxQueue: 2 });
  const all = ['a', 'b', 'c', 'd'].map((m) => rec.record(pod, 'Normal', 'R', m));
  await Promise.all(all);
  // The first went out at once; of b, c, d only the newest two fit the queue.
  assert.deepEqual((await client.resource(EVENTS, 'default').list()).items.map((e) => e.message).sort(), ['a', 'c', 'd']);
  rec.close();
  await rec.record(pod, 'Normal', 'R', 'after close');
  assert.equal((await client.resource(EVENTS, 'default').list()).items.length, 3);
});

test('forget(uid) drops what is remembered of a gone object, and keys past the 10-minute window expire', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const rec = new EventRecorder({ client, component: 'kubelet', host: 'node-1', clock, logger: noopLogger });
  const other: Pod = { ...pod, metadata: { ...pod.metadata, name: 'q', uid: 'u2' } };
  await rec.record(pod, 'Normal', 'Created', 'Created container c');
  await rec.record(pod, 'Normal', 'Started', 'Started container c');
  await rec.record(other, 'Normal', 'Created', 'Created container c');
  assert.equal(rec.remembered, 3);
  rec.forget('u1');
  assert.equal(rec.remembered, 1, 'only the other pod is remembered');
  // Forgotten: the same event again is a new Event, not a bump of the old one.
  await rec.record(pod, 'Normal', 'Created', 'Created container c');
  const created = (await client.resource(EVENTS, 'default').list()).items.filter((e) => e.involvedObject.uid === 'u1' && e.reason === 'Created');
  assert.deepEqual(created.map((e) => e.count), [1, 1]);
  // A repeat of u2's event keeps it fresh; 10 minutes later a new key pushes out only the stale one.
  clock.advance(9 * 60_000);
  await rec.record(other, 'Normal', 'Created', 'Created container c');
  clock.advance(2 * 60_000);
  await rec.record(other, 'Normal', 'Killing', 'Stopping container c');
  assert.equal(rec.remembered, 2, "u1's stale key expired; u2's bumped key and its new one stay");
});

test('spam filter: 25 events about one object go out at once, then one per 5 minutes; other objects are not held back', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const rec = new EventRecorder({ client, component: 'kubelet', host: 'node-1', clock, logger: noopLogger });
  const count = async (name: string): Promise<number> =>
    (await client.resource(EVENTS, 'default').list()).items.filter((e) => e.involvedObject.name === name).reduce((n, e) => n + (e.count ?? 1), 0);
  // Repeats count against the bucket as well as distinct messages.
  for (let i = 0; i < 30; i++) await rec.record(pod, 'Warning', 'BackOff', i % 2 === 0 ? 'back-off' : `attempt ${i}`);
  assert.equal(await count('p'), 25);
  const other: Pod = { ...pod, metadata: { ...pod.metadata, name: 'q', uid: 'u2' } };
  await rec.record(other, 'Normal', 'Started', 'started');
  assert.equal(await count('q'), 1, 'a second object has its own bucket');
  clock.advance(299_000);
  await rec.record(pod, 'Warning', 'BackOff', 'back-off');
  assert.equal(await count('p'), 25, 'no token before 5 minutes');
  clock.advance(1_000);
  await rec.record(pod, 'Warning', 'BackOff', 'back-off');
  await rec.record(pod, 'Warning', 'BackOff', 'back-off');
  assert.equal(await count('p'), 26, 'one token after 5 minutes');
  // A forgotten object (deleted) starts with a full bucket again.
  rec.forget('u1');
  await rec.record(pod, 'Warning', 'BackOff', 'fresh');
  assert.equal(await count('p'), 27);
});
