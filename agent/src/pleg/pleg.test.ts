import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock, RecordingLogger } from '@nodelet/base/testing';
import type { Pod } from '@nodelet/api';
import type { CriContainer, CriSandbox, RuntimeService } from '../kubecontainer/cri.js';
import { MANAGED_BY, POD_UID, CONTAINER_NAME } from '../kubecontainer/labels.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import type { PodSyncer } from '../podworkers/pod-worker.js';
import type { ObservedPod } from '../kubecontainer/observed.js';
import { Pleg } from './pleg.js';

/**
 * The four RPCs the PLEG makes, over two arrays the test edits; every listing is recorded with
 * its filter, and `hold` parks the next unfiltered container listing (a relist) until released.
 */
function fakeRuntime() {
  const sandboxes: CriSandbox[] = [];
  const containers: CriContainer[] = [];
  const lists: string[] = [];
  let held: { release: () => void; ready: Promise<void> } | undefined;
  const match = (labels: Record<string, string>, sel?: Record<string, string>) => Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
  const runtime = {
    listPodSandbox: async (req: { filter?: { labelSelector?: Record<string, string> } }) => {
      lists.push(`sandboxes ${req.filter?.labelSelector?.[POD_UID] ?? 'all'}`);
      return { items: sandboxes.filter((s) => match(s.labels, req.filter?.labelSelector)).map((s) => ({ ...s })) };
    },
    listContainers: async (req: { filter?: { labelSelector?: Record<string, string> } }) => {
      const uid = req.filter?.labelSelector?.[POD_UID];
      lists.push(`containers ${uid ?? 'all'}`);
      const snapshot = containers.filter((c) => match(c.labels, req.filter?.labelSelector)).map((c) => ({ ...c }));
      if (!uid && held) {
        const h = held;
        held = undefined;
        await h.ready;
      }
      return { containers: snapshot };
    },
    podSandboxStatus: async () => ({ status: { network: { ip: '10.0.0.2', additionalIps: [] } } }),
    containerStatus: async (req: { containerId: string }) => {
      const c = containers.find((x) => x.id === req.containerId);
      return { status: c ? { id: c.id, state: c.state, startedAt: '1000000000', finishedAt: '0', exitCode: 0 } : undefined };
    },
  } as unknown as RuntimeService;
  const labels = (uid: string, extra: Record<string, string> = {}) => ({ [MANAGED_BY]: 'true', [POD_UID]: uid, ...extra });
  return {
    runtime,
    lists,
    addPod(uid: string, state: CriContainer['state'] = 'CONTAINER_RUNNING'): void {
      const sb = `sb-${uid}`;
      sandboxes.push({ id: sb, state: 'SANDBOX_READY', labels: labels(uid), annotations: {}, createdAt: '1', runtimeHandler: '', metadata: { name: uid, uid, namespace: 'd', attempt: 0 } } as unknown as CriSandbox);
      containers.push({ id: `c-${uid}`, podSandboxId: sb, state, labels: labels(uid, { [CONTAINER_NAME]: 'c' }), annotations: {}, createdAt: '2', imageRef: 'img', image: { image: 'img' }, metadata: { name: 'c', attempt: 0 } } as unknown as CriContainer);
    },
    setState(uid: string, state: CriContainer['state']): void {
      for (const c of containers) if (c.labels[POD_UID] === uid) c.state = state;
    },
    /** The next relist's container listing waits (with what it listed) until `release()`. */
    holdNextRelist(): { release: () => void } {
      let release!: () => void;
      const ready = new Promise<void>((r) => (release = r));
      held = { release, ready };
      return { release };
    },
  };
}

const running = (p: ObservedPod) => p.containers.map((c) => `${c.name} ${c.state}`).join(',');

test('pleg: getNewerThan refreshes that pod alone at once when the cache is older, instead of waiting for the next relist', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  const changed: string[] = [];
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: (uid) => changed.push(uid) });
  const stop = new AbortController();
  const loop = pleg.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await loop;
  });
  await pollUntil('first relist', () => pleg.stamp > 0, { timeoutMs: 2000, intervalMs: 0 });
  assert.equal(running(pleg.get('u1')), '');

  // The agent starts the pod; the fake clock does not move, so no relist comes.
  rt.addPod('u1');
  rt.lists.length = 0;
  const seen = await pleg.getNewerThan('u1', clock.now(), stop.signal);
  assert.equal(running(seen), 'c running');
  assert.deepEqual(seen.sandboxes.map((s) => s.ips), [['10.0.0.2']]);
  assert.deepEqual(rt.lists.sort(), ['containers u1', 'sandboxes u1'], 'one listing of that pod, no relist');
  assert.equal(running(pleg.get('u1')), 'c running', 'the cache holds the refreshed view');

  // Newer state already cached: no CRI call at all.
  rt.lists.length = 0;
  await pleg.getNewerThan('u1', clock.now() - 1, stop.signal);
  assert.deepEqual(rt.lists, []);

  // The next relist sees the same: it wakes nobody (the worker that refreshed knows already).
  clock.advance(1000);
  await pollUntil('relist after the period', () => rt.lists.includes('containers all'), { timeoutMs: 2000, intervalMs: 0 });
  await pollUntil('relist landed', () => pleg.stamp === clock.now(), { timeoutMs: 2000, intervalMs: 0 });
  assert.equal(changed.length, 0, 'no pod woken');

  // What others change (the container exits) is still found by the relist and wakes the pod.
  rt.setState('u1', 'CONTAINER_EXITED');
  clock.advance(1000);
  await pollUntil('exit seen by a relist', () => changed.includes('u1'), { timeoutMs: 2000, intervalMs: 0 });
  assert.equal(running(pleg.get('u1')), 'c exited');
});

test('pleg: a relist that started before a pod refresh does not put the older view back when it lands', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  const changed: string[] = [];
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: (uid) => changed.push(uid) });
  const stop = new AbortController();
  t.after(() => stop.abort());
  await pleg.relist(stop.signal);

  // A relist lists nothing for u1 and is held; then the pod starts and its worker refreshes it.
  const held = rt.holdNextRelist();
  clock.advance(10);
  const relisting = pleg.relist(stop.signal);
  await pollUntil('relist listed', () => rt.lists.includes('containers all'), { timeoutMs: 2000, intervalMs: 0 });
  rt.addPod('u1');
  clock.advance(10);
  const seen = await pleg.getNewerThan('u1', clock.now() - 1, stop.signal);
  assert.equal(running(seen), 'c running');

  held.release();
  await relisting;
  assert.equal(running(pleg.get('u1')), 'c running', 'the refreshed view stays');
  assert.equal(changed.length, 0, 'the stale relist reports no change for the refreshed pod');

  // A relist that starts after the refresh takes over as usual.
  rt.setState('u1', 'CONTAINER_EXITED');
  clock.advance(10);
  await pleg.relist(stop.signal);
  assert.equal(running(pleg.get('u1')), 'c exited');
  assert.deepEqual(changed, ['u1']);
});

test('pleg: when the pod refresh fails (runtime away), getNewerThan waits for a relist instead of failing', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: () => {} });
  const stop = new AbortController();
  t.after(() => stop.abort());
  await pleg.relist(stop.signal);
  rt.addPod('u1');
  const list = rt.runtime.listContainers.bind(rt.runtime);
  let failing = true;
  rt.runtime.listContainers = (async (req: Parameters<RuntimeService['listContainers']>[0], o?: Parameters<RuntimeService['listContainers']>[1]) => {
    if (failing) throw new Error('runtime away');
    return list(req, o);
  }) as RuntimeService['listContainers'];
  let done = false;
  const waiting = pleg.getNewerThan('u1', clock.now(), stop.signal).then((p) => {
    done = true;
    return p;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(done, false);
  failing = false;
  clock.advance(5);
  await pleg.relist(stop.signal);
  assert.equal(running(await waiting), 'c running');
});

test('pod worker + pleg: the worker sees what its own sync started and syncs again at once, with no relist and no clock tick', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  const stop = new AbortController();
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: (uid) => workers.wake(uid) });
  await pleg.relist(stop.signal);
  const seen: string[] = [];
  const syncer: PodSyncer = {
    syncPod: async (_s, _p, observed) => {
      seen.push(running(observed) || 'nothing');
      if (observed.containers.length > 0) return { terminal: false };
      rt.addPod('u1'); // RunPodSandbox + CreateContainer + StartContainer
      return { terminal: false, changed: true };
    },
    syncTerminatingPod: async () => {},
    syncTerminatedPod: async () => {},
  };
  const workers = new PodWorkers({ syncer, cache: pleg, clock, log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  t.after(async () => {
    stop.abort();
    await workers.drain();
  });
  const pod: Pod = { metadata: { name: 'p', namespace: 'd', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'img' }] } };
  rt.lists.length = 0;
  workers.update({ pod });
  await pollUntil('second sync', () => seen.length === 2, { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(seen, ['nothing', 'c running']);
  assert.equal(rt.lists.filter((l) => l.endsWith(' all')).length, 0, 'no relist was needed');
  // Nothing changed in the second sync: the worker now waits for its resync period.
  await new Promise((r) => setImmediate(r));
  assert.equal(seen.length, 2);
});

test('pod worker: a sync that changed the runtime but asked for a wait (a start failed) does not resync at once', async (t) => {
  const clock = new FakeClock();
  const stop = new AbortController();
  let syncs = 0;
  const syncer: PodSyncer = {
    syncPod: async () => {
      syncs++;
      return { terminal: false, changed: true, requeueAfterMs: 5000 };
    },
    syncTerminatingPod: async () => {},
    syncTerminatedPod: async () => {},
  };
  const cache = { getNewerThan: async (uid: string) => ({ uid, name: '', namespace: '', sandboxes: [], containers: [] }), get: (uid: string) => ({ uid, name: '', namespace: '', sandboxes: [], containers: [] }) };
  const workers = new PodWorkers({ syncer, cache, clock, log: noopLogger, resyncMs: 60_000, signal: stop.signal, random: () => 0 });
  t.after(async () => {
    stop.abort();
    await workers.drain();
  });
  workers.update({ pod: { metadata: { name: 'p', namespace: 'd', uid: 'u1' }, spec: { containers: [] } } });
  await pollUntil('first sync and its timer', () => syncs === 1 && clock.pendingTimers === 1, { timeoutMs: 2000, intervalMs: 0 });
  assert.deepEqual(clock.timerDelays(), [5000]);
  clock.advance(5000);
  await pollUntil('second sync after the wait', () => syncs === 2, { timeoutMs: 2000, intervalMs: 0 });
});

test('pleg: the first relist that succeeds after failed ones reports the recovery, once (the agent then reports node status at once)', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  let recovered = 0;
  let relists = 0;
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: () => {}, onRecovered: () => recovered++, observeRelist: () => relists++ });
  const list = rt.runtime.listContainers.bind(rt.runtime);
  let failing = false;
  let failures = 0;
  rt.runtime.listContainers = (async (req: Parameters<RuntimeService['listContainers']>[0], o?: Parameters<RuntimeService['listContainers']>[1]) => {
    if (failing) {
      failures++;
      throw new Error('runtime away');
    }
    return list(req, o);
  }) as RuntimeService['listContainers'];
  const stop = new AbortController();
  const running = pleg.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
  });
  const tick = async (until: () => boolean): Promise<void> => {
    await pollUntil('the next relist', () => {
      clock.advance(1000);
      return until();
    }, { timeoutMs: 5000, intervalMs: 5 });
  };
  await tick(() => relists >= 2);
  assert.equal(recovered, 0, 'relists that never failed recover nothing');
  failing = true;
  await tick(() => failures >= 2);
  assert.equal(recovered, 0);
  failing = false;
  const before = relists;
  await tick(() => relists > before);
  assert.equal(recovered, 1, 'the first good relist after the failures');
  await tick(() => relists > before + 2);
  assert.equal(recovered, 1, 'and only that one');
});

test('pleg: a container status the runtime fails to give is logged, not dropped, and the relist goes on', async (t) => {
  const log = new RecordingLogger();
  const rt = fakeRuntime();
  const pleg = new Pleg({ runtime: rt.runtime, clock: new FakeClock(), log, onPodChanged: () => {} });
  const stop = new AbortController();
  t.after(() => stop.abort());
  rt.addPod('u1');
  rt.runtime.containerStatus = (async () => {
    throw new Error('status unavailable');
  }) as RuntimeService['containerStatus'];
  await pleg.relist(stop.signal);
  const warned = log.find(/container status failed/, 'warn');
  assert.equal(warned.length, 1);
  assert.equal(warned[0]!.fields.containerId, 'c-u1');
  assert.match(String(warned[0]!.fields.err), /status unavailable/);
  assert.equal(pleg.get('u1').containers.length, 1, 'the pod is still observed');
});

test('pleg: a relist of 30 new pods runs its status calls at once without node\'s MaxListenersExceededWarning on the relist signal (each CRI call listens for abort)', async (t) => {
  const rt = fakeRuntime();
  for (let i = 0; i < 30; i++) rt.addPod(`u${i}`);
  // As the CRI client does: every call in flight listens on the signal it was given.
  const listening = (call: () => Promise<unknown>) => async (_req: unknown, o: { signal: AbortSignal }) => {
    const onAbort = (): void => {};
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await call();
    } finally {
      o.signal.removeEventListener('abort', onAbort);
    }
  };
  const sandboxStatus = rt.runtime.podSandboxStatus.bind(rt.runtime);
  const containerStatus = rt.runtime.containerStatus.bind(rt.runtime);
  rt.runtime.podSandboxStatus = listening(() => sandboxStatus({ podSandboxId: '' })) as unknown as RuntimeService['podSandboxStatus'];
  rt.runtime.containerStatus = ((req: { containerId: string }, o: { signal: AbortSignal }) =>
    listening(() => containerStatus(req))(req, o)) as unknown as RuntimeService['containerStatus'];
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
  };
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const pleg = new Pleg({ runtime: rt.runtime, clock: new FakeClock(), log: noopLogger, onPodChanged: () => {} });
  const stop = new AbortController();
  t.after(() => stop.abort());
  await pleg.relist(stop.signal);
  assert.equal(pleg.all().size, 30);
  // node emits the warning on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(warnings.map((w) => w.message), []);
});

test('pleg: a relist that sees a pod unchanged keeps the cached view (the same object) and asks the runtime for no status', async (t) => {
  const clock = new FakeClock();
  const rt = fakeRuntime();
  const changed: string[] = [];
  let statusCalls = 0;
  const containerStatus = rt.runtime.containerStatus.bind(rt.runtime);
  rt.runtime.containerStatus = (...a: Parameters<RuntimeService['containerStatus']>) => (statusCalls++, containerStatus(...a));
  const pleg = new Pleg({ runtime: rt.runtime, clock, log: noopLogger, onPodChanged: (uid) => changed.push(uid) });
  const stop = new AbortController();
  t.after(() => stop.abort());
  rt.addPod('u1');
  rt.addPod('u2');
  await pleg.relist(stop.signal);
  assert.deepEqual(changed.sort(), ['u1', 'u2']);
  const [v1, v2] = [pleg.get('u1'), pleg.get('u2')];
  const calls = statusCalls;

  for (let i = 0; i < 3; i++) {
    clock.advance(1000);
    await pleg.relist(stop.signal);
  }
  assert.deepEqual(changed.sort(), ['u1', 'u2'], 'nobody woken');
  assert.ok(pleg.get('u1') === v1 && pleg.get('u2') === v2, 'the cached views are kept as they are');
  assert.equal(statusCalls, calls, 'running containers: statuses from the cache');

  // A change in one field of one container is a new view, and wakes that pod alone.
  rt.setState('u2', 'CONTAINER_EXITED');
  clock.advance(1000);
  await pleg.relist(stop.signal);
  assert.deepEqual(changed.sort(), ['u1', 'u2', 'u2']);
  assert.equal(pleg.get('u1'), v1);
  assert.notEqual(pleg.get('u2'), v2);
  assert.equal(running(pleg.get('u2')), 'c exited');
});
