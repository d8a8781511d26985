import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbortError, noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { StatusManager } from './status-manager.js';

test('flushed() waits for the writes and leaves no listener on a long-lived signal (it left one per wait)', async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const status = new StatusManager({ api: server.client(), clock, log: noopLogger });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const pod = server.seed(PODS, { metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) as Pod;
  const life = new AbortController();
  for (let i = 0; i < 30; i++) {
    status.setStatus(pod, { phase: 'Running', message: `round ${i}` });
    await status.flushed(life.signal);
    assert.equal((server.store.get(PODS, 'default', 'web') as Pod).status?.message, `round ${i}`);
  }
  assert.equal(getEventListeners(life.signal, 'abort').length, 0);

  // An abort ends a wait that cannot finish (the API refuses the write), with an AbortError.
  server.failNext({ method: 'PATCH' }, { code: 500 }, 100);
  status.setStatus(pod, { phase: 'Running', message: 'never written' });
  const waiting = status.flushed(life.signal);
  life.abort();
  await assert.rejects(waiting, (err: unknown) => isAbortError(err));
});

test('while the API server is away, statuses coalesce: each retry sends only the latest per pod, and its return costs one write per pod with the latest status', async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const status = new StatusManager({ api: server.client(), clock, log: noopLogger });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const spec = { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] };
  const pods = ['a', 'b'].map((name) => server.seed(PODS, { metadata: { name, namespace: 'default' }, spec }) as Pod);
  for (const p of pods) status.setStatus(p, { phase: 'Running', message: 'before' });
  await status.flushed(AbortSignal.timeout(5000));

  // Away: every write fails. 40 updates per pod over 20 s (past two resyncs).
  server.failNext({ method: 'PATCH' }, { code: 503, reason: 'ServiceUnavailable' }, Number.MAX_SAFE_INTEGER);
  const from = server.requests.length;
  for (let i = 0; i < 40; i++) {
    for (const p of pods) status.setStatus(p, { phase: 'Running', message: `update ${i}` });
    await clock.advanceAsync(500);
  }
  const patchesOf = (name: string, since: number) => server.requests.slice(since).filter((r) => r.method === 'PATCH' && r.path.endsWith(`/pods/${name}/status`));
  // The writer's HTTP calls are real I/O: the fake clock moves in small steps while they land.
  const step = async (): Promise<void> => {
    await clock.advanceAsync(100);
    await new Promise((r) => setTimeout(r, 5));
  };
  await pollUntil('a retry carrying the latest status', async () => {
    await step();
    return pods.every((p) => /update 39/.test(patchesOf(p.metadata.name!, from).at(-1)?.body ?? ''));
  }, { timeoutMs: 10_000, intervalMs: 1 });
  for (const p of pods) {
    const tries = patchesOf(p.metadata.name!, from).length;
    assert.ok(tries <= 45, `at most one attempt per retry interval (500 ms), not one per update: ${tries}`);
  }

  // Back: one write per pod, with the latest status; nothing older follows it.
  server.clearFailures();
  const back = server.requests.length;
  await pollUntil('statuses written after the return', async () => {
    await step();
    return pods.every((p) => (server.store.get(PODS, 'default', p.metadata.name!) as Pod).status?.message === 'update 39');
  }, { timeoutMs: 10_000, intervalMs: 1 });
  for (const p of pods) {
    const writes = patchesOf(p.metadata.name!, back);
    assert.equal(writes.length, 1, `one write for ${p.metadata.name} after the return`);
    assert.match(writes[0]!.body, /update 39/);
    assert.equal((server.store.get(PODS, 'default', p.metadata.name!) as Pod).status?.message, 'update 39');
  }
  for (let i = 0; i < 30; i++) await step();
  for (const p of pods) assert.equal(patchesOf(p.metadata.name!, back).length, 1, 'no backlog of stale patches follows');
});

test('one pod’s slow status write does not hold up another pod’s next write (it waited for the whole batch)', async (t) => {
  const clock = new FakeClock();
  const stop = new AbortController();
  const patches: string[] = [];
  let releaseSlow!: () => void;
  const slow = new Promise<void>((r) => (releaseSlow = r));
  const api = {
    patch: async (_r: unknown, name: string, body: { status: { message?: string } }) => {
      patches.push(`${name} ${body.status.message}`);
      if (name === 'slow') await slow;
      return {};
    },
    delete: async () => ({}),
  } as unknown as ConstructorParameters<typeof StatusManager>[0]['api'];
  const status = new StatusManager({ api, clock, log: noopLogger, concurrency: 4 });
  const running = status.run(stop.signal);
  t.after(async () => {
    releaseSlow();
    stop.abort();
    await running;
  });
  const pod = (name: string): Pod => ({ metadata: { name, namespace: 'default', uid: name }, spec: { containers: [] } });
  status.setStatus(pod('slow'), { phase: 'Pending', message: 'creating' });
  status.setStatus(pod('fast'), { phase: 'Pending', message: 'creating' });
  await pollUntil('both first writes sent', () => patches.length === 2, { timeoutMs: 2000, intervalMs: 0 });
  // The fast pod turns Ready while the slow pod's write still hangs: its patch goes out at once.
  status.setStatus(pod('fast'), { phase: 'Running', message: 'ready' });
  await pollUntil('fast pod written again', () => patches.includes('fast ready'), { timeoutMs: 2000, intervalMs: 0 });
  // The slow pod's newer status waits for its own write in flight (one write per pod at a time), then goes out once.
  status.setStatus(pod('slow'), { phase: 'Running', message: 'ready' });
  await new Promise((r) => setImmediate(r));
  assert.equal(patches.filter((p) => p.startsWith('slow')).length, 1);
  releaseSlow();
  await status.flushed(AbortSignal.timeout(2000));
  assert.deepEqual(patches.filter((p) => p.startsWith('slow')), ['slow creating', 'slow ready']);
});

test("a resync rewrites only the statuses the API shows differently (kubelet's needsReconcile), not every pod every 10 s", async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const stored = (name: string) => server.store.get(PODS, 'default', name) as Pod;
  const uids = new Map<string, string>();
  const status = new StatusManager({
    api: server.client(), clock, log: noopLogger, resyncMs: 10_000,
    // The informer's copy: here the store itself.
    apiStatus: (uid) => {
      const name = [...uids].find(([, u]) => u === uid)?.[0];
      return name ? stored(name).status : undefined;
    },
  });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const spec = { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] };
  const pods = ['same', 'changed'].map((name) => server.seed(PODS, { metadata: { name, namespace: 'default' }, spec }) as Pod);
  for (const p of pods) {
    uids.set(p.metadata.name!, p.metadata.uid!);
    status.setStatus(p, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], message: 'ours' });
  }
  await status.flushed(AbortSignal.timeout(5000));
  // Someone else rewrites one pod's status behind the agent's back.
  await server.client().patch(PODS, 'changed', { status: { message: 'theirs' } }, { type: 'merge', namespace: 'default', subresource: 'status' });
  const from = server.requests.length;
  const patchesOf = (name: string) => server.requests.slice(from).filter((r) => r.method === 'PATCH' && r.path.endsWith(`/pods/${name}/status`));
  await pollUntil('the changed status rewritten by a resync', async () => {
    await clock.advanceAsync(1000);
    return stored('changed').status?.message === 'ours';
  }, { timeoutMs: 10_000, intervalMs: 1 });
  for (let i = 0; i < 25; i++) await clock.advanceAsync(1000);
  assert.equal(patchesOf('same').length, 0, 'an unchanged status costs no request at resync');
  assert.equal(patchesOf('changed').length, 1, 'the one the API shows differently is written once');
});

test('a resync does not rewrite a status whose only difference from the informer copy is a null the protobuf copy leaves out (a condition\'s lastProbeTime: null was PATCHed every 10 s for every pod)', async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const stored = (name: string) => server.store.get(PODS, 'default', name) as Pod;
  let uid = '';
  const status = new StatusManager({
    api: server.client(), clock, log: noopLogger, resyncMs: 10_000,
    // The agent's pod informer lists and watches in protobuf, where a null time is an absent field:
    // its copy of the stored status lacks the condition's lastProbeTime.
    apiStatus: (u) => {
      if (u !== uid) return undefined;
      const st = structuredClone(stored('p').status!);
      for (const c of st.conditions ?? []) if (c.lastProbeTime === null) delete c.lastProbeTime;
      return st;
    },
  });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const pod = server.seed(PODS, { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) as Pod;
  uid = pod.metadata.uid!;
  status.setStatus(pod, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-05T05:00:00Z' }] });
  await status.flushed(AbortSignal.timeout(5000));
  assert.equal(stored('p').status?.phase, 'Running');
  const from = server.requests.length;
  for (let i = 0; i < 35; i++) await clock.advanceAsync(1000);
  await status.flushed(AbortSignal.timeout(5000));
  const patches = server.requests.slice(from).filter((r) => r.method === 'PATCH');
  assert.equal(patches.length, 0, 'three resyncs of an unchanged status cost no request');
});

test('a resync compares a status with the informer copy once per copy: the same object and the same status agree again without the deep compare, a replaced copy is compared anew', async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  let uid = '';
  let reads = 0;
  // The informer's copy, with a getter that counts how often the comparison walks it.
  const informerCopy = (message: string) => {
    const st = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } as Record<string, unknown>;
    Object.defineProperty(st, 'message', { enumerable: true, get: () => (reads++, message) });
    return st;
  };
  let copy = informerCopy('ours');
  const status = new StatusManager({ api: server.client(), clock, log: noopLogger, resyncMs: 10_000, apiStatus: (u) => (u === uid ? copy : undefined) });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const pod = server.seed(PODS, { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) as Pod;
  uid = pod.metadata.uid!;
  status.setStatus(pod, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], message: 'ours' });
  await status.flushed(AbortSignal.timeout(5000));
  const patches = () => server.requests.filter((r) => r.method === 'PATCH').length;
  const written = patches();
  await pollUntil('the first resync compared the copy', async () => {
    await clock.advanceAsync(1000);
    return reads > 0;
  }, { timeoutMs: 10_000, intervalMs: 1 });
  await status.flushed(AbortSignal.timeout(5000));
  const afterFirst = reads;
  for (let i = 0; i < 35; i++) await clock.advanceAsync(1000);
  await status.flushed(AbortSignal.timeout(5000));
  assert.equal(reads, afterFirst, 'three more resyncs of the same copy walked it again');
  assert.equal(patches(), written, 'an agreeing status is not written');
  // The informer replaces its copy (someone else wrote the status): the next resync compares it and writes ours back.
  copy = informerCopy('theirs');
  await pollUntil('the replaced copy compared and ours written back', async () => {
    await clock.advanceAsync(1000);
    return patches() > written;
  }, { timeoutMs: 10_000, intervalMs: 1 });
});
