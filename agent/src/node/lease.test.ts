/**
 * The node Lease loop on the fake clock against a real HTTP API (InMemoryApiServer): what it
 * writes, how often, how it backs off, and how it recovers a lease that was deleted or changed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { LEASES, type Lease } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { NODE_LEASE_NAMESPACE, NodeLease, microTime } from './lease.js';

const NODE = 'n1';

async function world(t: { after(fn: () => unknown): void }) {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const lease = new NodeLease({ api: server.client(), nodeName: NODE, durationSeconds: 40, clock, log: noopLogger, nodeUid: () => 'node-uid' });
  const running = lease.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const stored = (): Lease | undefined => server.store.get(LEASES, NODE_LEASE_NAMESPACE, NODE) as Lease | undefined;
  /** The delay the loop sleeps next, once it has armed it (the request before it is real I/O). */
  const nextWait = (): Promise<number> => pollUntil('the lease loop to sleep', () => clock.pendingTimers === 1 && clock.timerDelays()[0], { timeoutMs: 5000, intervalMs: 2 });
  const writes = (method: string): number => server.requests.filter((r) => r.method === method && r.path.includes('/leases')).length;
  return { server, clock, stop, lease, running, stored, nextWait, writes };
}

test('lease: created at start (owned by the Node), then renewTime moved every 10 s for a 40 s lease', async (t) => {
  const w = await world(t);
  assert.equal(await w.nextWait(), 10_000);
  const created = w.stored()!;
  assert.equal(created.spec?.holderIdentity, NODE);
  assert.equal(created.spec?.leaseDurationSeconds, 40);
  assert.equal(created.spec?.renewTime, microTime(w.clock.now()));
  assert.match(created.spec!.renewTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime');
  assert.deepEqual(created.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['Node', NODE, 'node-uid']]);
  assert.equal(w.lease.lastRenew, w.clock.now());

  for (let i = 1; i <= 3; i++) {
    await w.clock.advanceAsync(10_000);
    assert.equal(await w.nextWait(), 10_000);
    assert.equal(w.stored()!.spec?.renewTime, microTime(w.clock.now()), `renewal ${i}`);
  }
  assert.deepEqual([w.writes('POST'), w.writes('PUT')], [1, 3], 'one create, then updates');
});

test('lease: a failed renewal retries after 200 ms doubling (never beyond the renew interval); a success resets the backoff', async (t) => {
  const w = await world(t);
  assert.equal(await w.nextWait(), 10_000);
  w.server.failNext({ method: 'PUT', path: /\/leases\// }, { code: 500 }, 7);
  await w.clock.advanceAsync(10_000);
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) {
    const ms = await w.nextWait();
    waits.push(ms);
    await w.clock.advanceAsync(ms);
  }
  assert.deepEqual(waits, [200, 400, 800, 1600, 3200, 6400, 7000]);
  assert.equal(await w.nextWait(), 10_000, 'renewed: back to the interval');
  assert.equal(w.stored()!.spec?.renewTime, microTime(w.clock.now()));
  w.server.failNext({ method: 'PUT', path: /\/leases\// }, { code: 500 });
  await w.clock.advanceAsync(10_000);
  assert.equal(await w.nextWait(), 200, 'the backoff starts over after a success');
});

test('lease: one deleted behind the agent’s back is created again; one changed by someone else is re-read, then renewed', async (t) => {
  const w = await world(t);
  assert.equal(await w.nextWait(), 10_000);
  const first = w.stored()!;
  w.server.store.remove(LEASES, NODE_LEASE_NAMESPACE, NODE);
  await w.clock.advanceAsync(10_000);
  assert.equal(await w.nextWait(), 200, 'the update found nothing: retry soon');
  await w.clock.advanceAsync(200);
  assert.equal(await w.nextWait(), 10_000);
  const recreated = w.stored()!;
  assert.notEqual(recreated.metadata.uid, first.metadata.uid, 'a new lease');
  assert.equal(recreated.spec?.renewTime, microTime(w.clock.now()));

  // Someone else writes the lease: the agent's copy is stale (409), so it reads it again.
  const theirs = await w.server.client().update(LEASES, { ...recreated, spec: { ...recreated.spec, holderIdentity: 'intruder' } }, { namespace: NODE_LEASE_NAMESPACE });
  await w.clock.advanceAsync(10_000);
  assert.equal(await w.nextWait(), 200);
  await w.clock.advanceAsync(200);
  assert.equal(await w.nextWait(), 10_000);
  const renewed = w.stored()!;
  assert.equal(renewed.metadata.uid, theirs.metadata.uid, 'the same lease, updated');
  assert.equal(renewed.spec?.holderIdentity, NODE);
  assert.equal(renewed.spec?.renewTime, microTime(w.clock.now()));
});

test('lease: stopping ends the loop at once, even in the middle of a backoff', async (t) => {
  const w = await world(t);
  await w.nextWait();
  w.server.failNext({ method: 'PUT', path: /\/leases\// }, { code: 500 });
  await w.clock.advanceAsync(10_000);
  assert.equal(await w.nextWait(), 200);
  w.stop.abort();
  await w.running;
  assert.equal(w.clock.pendingTimers, 0);
});
