import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS, NODES, PODS, type Event, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startScheduler } from './index.js';
import { makeNode, makePod } from './testing/objects.js';

function strip(p: Pod): Pod {
  return { ...p, metadata: { ...p.metadata, uid: undefined }, status: undefined };
}

test('binds pending pods through pods/binding, spreads one owner, and records events', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  for (const n of ['n1', 'n2', 'n3']) server.seed(NODES, makeNode(n));
  const ac = new AbortController();
  const sched = await startScheduler({ client, logger: noopLogger, signal: ac.signal });
  t.after(() => sched.close());

  for (let i = 0; i < 3; i++) await client.resource(PODS, 'default').create(strip(makePod(`web-${i}`, { owner: 'rs' })));
  const pods = await pollUntil('3 bound pods', async () => {
    const l = await client.resource(PODS, 'default').list();
    return l.items.every((p) => p.spec?.nodeName) && l.items.length === 3 ? l.items : undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  assert.deepEqual(new Set(pods.map((p) => p.spec?.nodeName)), new Set(['n1', 'n2', 'n3']));
  const events = await pollUntil('Scheduled events', async () => {
    const l = await client.resource(EVENTS, 'default').list();
    return l.items.filter((e) => e.reason === 'Scheduled').length === 3 ? l.items : undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  const e = events.find((x: Event) => x.involvedObject.name === 'web-0')!;
  assert.equal(e.message, `Successfully assigned default/web-0 to ${pods.find((p) => p.metadata.name === 'web-0')?.spec?.nodeName}`);
  assert.equal(e.type, 'Normal');
  assert.equal(e.source?.component, 'default-scheduler');
  assert.equal(e.reportingComponent, 'default-scheduler');
  assert.equal(e.involvedObject.kind, 'Pod');
});

test('an unschedulable pod gets FailedScheduling and PodScheduled=False, then binds when a node fits', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  server.seed(NODES, makeNode('small', { cpu: '1' }));
  server.seed(NODES, makeNode('tainted', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }));
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal });
  t.after(() => sched.close());

  await client.resource(PODS, 'default').create(strip(makePod('big', { cpu: '2' })));
  const ev = await pollUntil('FailedScheduling', async () => (await client.resource(EVENTS, 'default').list()).items.find((e) => e.reason === 'FailedScheduling'), { timeoutMs: 8000, intervalMs: 25 });
  assert.equal(
    ev.message,
    '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
  );
  assert.equal(ev.type, 'Warning');
  const cond = await pollUntil('PodScheduled=False', async () => (await client.resource(PODS, 'default').get('big')).status?.conditions?.find((c) => c.type === 'PodScheduled'), { timeoutMs: 8000, intervalMs: 25 });
  assert.deepEqual([cond.status, cond.reason], ['False', 'Unschedulable']);

  // A new node is a cluster event: the pod leaves the unschedulable set and binds after its backoff.
  await client.resource(NODES).create(makeNode('big-node', { cpu: '8' }));
  const bound = await pollUntil('bound to big-node', async () => {
    const p = await client.resource(PODS, 'default').get('big');
    return p.spec?.nodeName || undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  assert.equal(bound, 'big-node');
});

test('pods of another scheduler and pods with nodeName are left alone', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  server.seed(NODES, makeNode('n1'));
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal });
  await client.resource(PODS, 'default').create(strip(makePod('other', { spec: { schedulerName: 'my-scheduler' } })));
  await client.resource(PODS, 'default').create(strip(makePod('marker')));
  await pollUntil('marker bound', async () => (await client.resource(PODS, 'default').get('marker')).spec?.nodeName || undefined, { timeoutMs: 8000, intervalMs: 25 });
  await sched.close();
  assert.equal((await client.resource(PODS, 'default').get('other')).spec?.nodeName, undefined);
  assert.equal(server.requests.filter((r) => r.path.endsWith('/other/binding')).length, 0);
});

test('a bound pod resized in place to less wakes an unschedulable pod at once (no 5-minute flush)', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  server.seed(NODES, makeNode('n', { cpu: '2' }));
  const hog = makePod('hog', { cpu: '1500m' });
  hog.spec!.nodeName = 'n';
  server.seed(PODS, hog);
  const sched = await startScheduler({ client, logger: noopLogger, signal: new AbortController().signal });
  t.after(() => sched.close());
  await client.resource(PODS, 'default').create(strip(makePod('small', { cpu: '1' })));
  await pollUntil('small unschedulable', async () => (await client.resource(PODS, 'default').get('small')).status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False'), { timeoutMs: 8000, intervalMs: 25 });
  // The agent applied a resize to 500m: spec, allocated and actual requests all went down.
  const cur = await client.resource(PODS, 'default').get('hog');
  cur.spec!.containers[0]!.resources = { requests: { cpu: '500m' } };
  cur.status = { ...cur.status, containerStatuses: [{ name: cur.spec!.containers[0]!.name, ready: true, restartCount: 0, image: 'i', imageID: 'i', allocatedResources: { cpu: '500m' }, resources: { requests: { cpu: '500m' } } }] };
  await client.resource(PODS, 'default').update(cur);
  const bound = await pollUntil('small bound', async () => (await client.resource(PODS, 'default').get('small')).spec?.nodeName, { timeoutMs: 20_000, intervalMs: 50 });
  assert.equal(bound, 'n');
});
