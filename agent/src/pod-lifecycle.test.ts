/**
 * The pod lifecycle wired as in the agent (PLEG, PodRuntime, status manager, pod workers), with
 * fakes only at the process boundaries: FakeCriServer (a real gRPC server on a unix socket) and
 * InMemoryApiServer (a real HTTP server).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError, noopLogger, pollUntil, systemClock } from '@nodelet/base';
import { PODS, type ContainerStatus, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { cleanups } from '@nodelet/base/testing';
import { Pleg } from './pleg/pleg.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { ImageManager } from './runtime/image-manager.js';
import { StatusManager } from './status/status-manager.js';
import { PodWorkers } from './podworkers/pod-workers.js';
import { PodLifecycle } from './pod-lifecycle.js';
import type { EventType } from './kubecontainer/events.js';
import type { PodSyncer } from './podworkers/pod-worker.js';

const IMAGE = 'registry.test/busybox:1.36';


async function world(
  t: { after(fn: () => unknown): void },
  shared?: { fake: FakeCriServer; api: InMemoryApiServer; dir: string },
  o: { runtimeHandler?: (pod: Pod, signal: AbortSignal) => Promise<string>; beforeContainers?: (pod: Pod, ips: readonly string[], signal: AbortSignal) => Promise<void>; crashLoopInitialMs?: number } = {},
) {
  const cleanup = cleanups(t);
  const fake = shared?.fake ?? (await FakeCriServer.start());
  const api = shared?.api ?? (await InMemoryApiServer.start());
  const dir = shared?.dir ?? (await mkdtemp(join(tmpdir(), 'nodelet-agent-unit-')));
  if (!shared) {
    fake.runtime.addImage(IMAGE);
    cleanup(async () => {
      await api.close();
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    });
  }
  const cri = createCriClient({ endpoint: fake.endpoint });
  const client = api.client();
  const stop = new AbortController();
  const events: Array<{ reason: string; type: EventType; message: string }> = [];
  const forgotten: string[] = [];
  const apiPods = new Set<string>();
  const holder: { workers?: PodWorkers } = {};
  const pleg = new Pleg({ runtime: cri.runtime, clock: systemClock, log: noopLogger, periodMs: 50, onPodChanged: (uid) => holder.workers?.wake(uid) });
  const runtime = new PodRuntime({
    runtime: cri.runtime,
    images: new ImageManager({ images: cri.image, clock: systemClock, maxParallelPulls: 1 }),
    env: { configMap: async () => undefined, secret: async () => undefined },
    events: { event: (_p, type, reason, message) => events.push({ type, reason, message }), forget: (uid) => forgotten.push(uid) },
    clock: systemClock,
    log: noopLogger,
    paths: { rootDir: join(dir, 'root'), podLogsDir: join(dir, 'logs') },
    nodeName: 'node-1',
    hostIP: () => '192.0.2.10',
    nodeMemoryBytes: 2 ** 30,
    runtimeRequestTimeoutMs: 10_000,
    shutdown: stop.signal,
    crashLoopInitialMs: o.crashLoopInitialMs ?? 200,
    crashLoopMaxMs: Math.max(800, o.crashLoopInitialMs ?? 0),
    onSandboxIps: (id, ips) => pleg.noteSandboxIps(id, ips),
    ...(o.runtimeHandler ? { runtimeHandler: o.runtimeHandler } : {}),
    ...(o.beforeContainers ? { beforeContainers: o.beforeContainers } : {}),
  });
  const status = new StatusManager({ api: client, clock: systemClock, log: noopLogger, resyncMs: 1000 });
  const lifecycle = new PodLifecycle({
    api: client, runtime, pleg, status, clock: systemClock, log: noopLogger,
    hostIP: () => '192.0.2.10', runtimeName: () => 'containerd', nodeUid: () => undefined,
    inApi: (uid) => apiPods.has(uid), staticDesired: () => false,
  });
  // The lifecycle as is, counting the pod syncs that ran to their end: an observable point for "nothing happened".
  const syncs = { done: 0 };
  const syncer: PodSyncer = {
    syncPod: async (...a) => {
      try {
        return await lifecycle.syncPod(...a);
      } finally {
        syncs.done++;
      }
    },
    syncTerminatingPod: (...a) => lifecycle.syncTerminatingPod(...a),
    syncTerminatedPod: (...a) => lifecycle.syncTerminatedPod(...a),
  };
  const workers = new PodWorkers({ syncer, cache: pleg, clock: systemClock, log: noopLogger, resyncMs: 5000, signal: stop.signal });
  holder.workers = workers;
  await pleg.relist(stop.signal);
  const loops = [pleg.run(stop.signal), status.run(stop.signal)];
  const close = async () => {
    stop.abort();
    await Promise.allSettled(loops);
    await workers.drain();
    cri.close();
  };
  cleanup(close);
  const submit = (pod: Pod) => {
    apiPods.add(pod.metadata.uid!);
    workers.update({ pod, terminationRequested: !!pod.metadata.deletionTimestamp, gracePeriodS: pod.metadata.deletionGracePeriodSeconds });
  };
  return { fake, api, dir, cri, client, events, forgotten, workers, submit, close, apiPods, pleg, status, syncs, signal: stop.signal };
}

function podObj(name: string, command: string[], restartPolicy: 'Always' | 'Never' = 'Always'): Pod {
  return {
    metadata: { name, namespace: 'default' },
    spec: { nodeName: 'node-1', restartPolicy, terminationGracePeriodSeconds: 7, containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command }] },
  };
}

test('a pod is created through CRI with kubelet labels, reported Running, and recovered without restarts after an agent restart', async (t) => {
  const w = await world(t);
  const pod = w.api.seed(PODS, podObj('p1', ['sleep', '1000']));
  w.submit(pod);
  const running = await pollUntil('Running in the API', async () => {
    const p = await w.client.get(PODS, 'p1', { namespace: 'default' });
    return p.status?.phase === 'Running' && p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? p : undefined;
  }, { timeoutMs: 10_000, intervalMs: 20 });
  assert.ok(running.status!.podIP, 'pod IP from the sandbox');
  assert.equal(w.fake.runtime.callsOf('RunPodSandbox').length, 1);
  assert.equal(w.fake.runtime.callsOf('CreateContainer').length, 1);
  const [c] = [...w.fake.runtime.containers.values()];
  assert.equal(c!.config.labels?.['io.kubernetes.pod.uid'], pod.metadata.uid);
  assert.equal(c!.config.labels?.['io.kubernetes.container.name'], 'c');
  assert.equal(c!.config.annotations?.['io.kubernetes.container.restartCount'], '0');
  assert.ok(c!.config.annotations?.['io.kubernetes.container.hash']);
  assert.deepEqual(w.events.map((e) => e.reason), ['Created', 'Started']);

  // "restart": new components against the same runtime and API; nothing is created again
  await w.close();
  const w2 = await world(t, w);
  w2.submit(await w.client.get(PODS, 'p1', { namespace: 'default' }));
  // The new worker's first sync, which sees the runtime's sandbox and container, has run to its end.
  await pollUntil('a sync of p1 after the restart', () => w2.syncs.done >= 1, { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(w.fake.runtime.callsOf('RunPodSandbox').length, 1, 'no new sandbox');
  assert.equal(w.fake.runtime.callsOf('CreateContainer').length, 1, 'no new container');
  assert.equal(w.fake.runtime.callsOf('StopContainer').length, 0);
});

test('beforeContainers (NetworkPolicy admission) is awaited with the sandbox IP before any container is created', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const calls: Array<{ name: string; ips: readonly string[] }> = [];
  const w = await world(t, undefined, {
    beforeContainers: async (pod, ips) => {
      calls.push({ name: pod.metadata.name!, ips });
      await held;
    },
  });
  w.submit(w.api.seed(PODS, podObj('gated', ['sleep', '1000'])));
  await pollUntil('the hook is called', () => calls.length > 0, { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(calls[0]!.name, 'gated');
  assert.equal(calls[0]!.ips.length, 1, 'the sandbox IP from CNI ADD');
  assert.equal(w.fake.runtime.callsOf('RunPodSandbox').length, 1);
  assert.equal(w.fake.runtime.callsOf('CreateContainer').length, 0, 'no container while the hook holds');
  release();
  await pollUntil('the container runs', () => [...w.fake.runtime.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'), { timeoutMs: 10_000, intervalMs: 20 });
});

test('an exited container is restarted with restartCount+1, then backs off (CrashLoopBackOff)', async (t) => {
  // A backoff of a second: the CrashLoopBackOff status lasts only until the next start, and a status
  // replaced before its write went out is never written (the status manager sends the latest).
  const w = await world(t, undefined, { crashLoopInitialMs: 1000 });
  const pod = w.api.seed(PODS, podObj('crash', ['false']));
  w.submit(pod);
  const first = await pollUntil('first container', () => [...w.fake.runtime.containers.values()].find((c) => c.state === 'CONTAINER_RUNNING'), { timeoutMs: 10_000, intervalMs: 20 });
  w.fake.runtime.exitContainer(first.id, 1);
  const second = await pollUntil('restarted container', () => [...w.fake.runtime.containers.values()].find((c) => c.state === 'CONTAINER_RUNNING' && c.id !== first.id), { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(second.config.annotations?.['io.kubernetes.container.restartCount'], '1');
  // The statuses written from here on, in order, from a watch: a poll could miss the backoff's.
  const from = await w.client.get(PODS, 'crash', { namespace: 'default' });
  const watching = new AbortController();
  t.after(() => watching.abort());
  let backingOff: ContainerStatus | undefined;
  const watched = (async () => {
    try {
      for await (const e of w.client.resource(PODS, 'default').watch({ resourceVersion: from.metadata.resourceVersion, signal: watching.signal })) {
        const s = (e.object as Pod).status?.containerStatuses?.[0];
        if (s?.state?.waiting?.reason === 'CrashLoopBackOff') backingOff ??= s;
      }
    } catch (err) {
      if (!watching.signal.aborted) throw err;
    }
  })();
  w.fake.runtime.exitContainer(second.id, 1);
  const waiting = await pollUntil('CrashLoopBackOff in a written status', () => backingOff, { timeoutMs: 10_000, intervalMs: 20 });
  watching.abort();
  await watched;
  assert.equal(waiting.lastState?.terminated?.exitCode, 1);
  assert.equal(waiting.restartCount, 1);
  // after the backoff it is started again
  const third = await pollUntil('third container', () => [...w.fake.runtime.containers.values()].find((c) => c.config.annotations?.['io.kubernetes.container.restartCount'] === '2'), { timeoutMs: 10_000, intervalMs: 20 });
  assert.ok(third);
  assert.ok(w.events.some((e) => e.reason === 'BackOff' && e.type === 'Warning'));
});

test('deletion stops containers with the grace period, removes everything, then deletes the pod with grace 0', async (t) => {
  const w = await world(t);
  const pod = w.api.seed(PODS, podObj('gone', ['sleep', '1000']));
  w.submit(pod);
  await pollUntil('running', () => [...w.fake.runtime.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'), { timeoutMs: 10_000, intervalMs: 20 });
  await w.client.delete(PODS, 'gone', { namespace: 'default', gracePeriodSeconds: 3 });
  const deleting = await w.client.get(PODS, 'gone', { namespace: 'default' });
  assert.ok(deleting.metadata.deletionTimestamp);
  w.submit(deleting);
  await pollUntil('pod gone from the API', async () => w.client.get(PODS, 'gone', { namespace: 'default' }).then(() => false, () => true), { timeoutMs: 10_000, intervalMs: 20 });
  const stop = w.fake.runtime.callsOf('StopContainer') as Array<{ timeout?: number }>;
  assert.equal(Number(stop[0]?.timeout), 3, 'StopContainer timeout = grace period');
  assert.ok(w.fake.runtime.callsOf('StopPodSandbox').length >= 1);
  assert.equal(w.fake.runtime.containers.size, 0);
  assert.equal(w.fake.runtime.sandboxes.size, 0);
  const del = w.api.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith('/pods/gone')).at(-1)!;
  const body = JSON.parse(del.body) as { gracePeriodSeconds?: number; preconditions?: { uid?: string } };
  assert.equal(body.gracePeriodSeconds, 0);
  assert.equal(body.preconditions?.uid, pod.metadata.uid);
  assert.ok(w.events.some((e) => e.reason === 'Killing'));
  assert.deepEqual(w.forgotten, [pod.metadata.uid], "the deleted pod's event aggregation keys are dropped");
});

test('a deletion does not cancel a StartContainer in flight (containerd 1.6 leaks a cancelled task\'s cgroups); the termination stops what it started', async (t) => {
  const w = await world(t);
  const held = w.fake.runtime.hold('StartContainer');
  w.submit(w.api.seed(PODS, podObj('racing', ['sleep', '1000'])));
  await held.reached;
  await w.client.delete(PODS, 'racing', { namespace: 'default', gracePeriodSeconds: 3 });
  w.submit(await w.client.get(PODS, 'racing', { namespace: 'default' }));
  // A cancellation would have been sent at the preemption: a later call on the same connection
  // reaches the runtime after it.
  await w.cri.runtime.version({});
  assert.equal(held.cancelled, false, 'StartContainer is not cancelled by the deletion');
  held.release();
  await pollUntil('pod gone from the API', async () => w.client.get(PODS, 'racing', { namespace: 'default' }).then(() => false, () => true), { timeoutMs: 10_000, intervalMs: 20 });
  const started = w.fake.runtime.callsOf('StartContainer') as Array<{ containerId: string }>;
  const stopped = w.fake.runtime.callsOf('StopContainer') as Array<{ containerId: string }>;
  assert.ok(stopped.some((s) => s.containerId === started[0]?.containerId), 'the container started by the held call was stopped');
  assert.equal(w.fake.runtime.containers.size, 0);
  assert.equal(w.fake.runtime.sandboxes.size, 0);
  assert.ok(!w.events.some((e) => e.reason === 'Started'), 'a start the pod no longer wanted is not reported');
});

test("the agent's shutdown still cancels a StartContainer in flight", async (t) => {
  const w = await world(t);
  const held = w.fake.runtime.hold('StartContainer');
  w.submit(w.api.seed(PODS, podObj('stopping', ['sleep', '1000'])));
  await held.reached;
  const closed = w.close();
  await pollUntil('the runtime to see the held StartContainer cancelled', () => held.cancelled, { timeoutMs: 5_000, intervalMs: 10 });
  held.release();
  await closed;
});

test('a pod whose volume name would be a host path gets no sandbox: CreateContainerConfigError and a FailedMount event', async (t) => {
  const w = await world(t);
  // The API server refuses this pod; a static pod or an older server would not have.
  const bad = podObj('traversal', ['sleep', '1000']);
  bad.spec!.volumes = [{ name: '../../../../etc/cron.d', configMap: { name: 'cron' } }];
  bad.spec!.containers[0]!.volumeMounts = [{ name: '../../../../etc/cron.d', mountPath: '/etc/cron.d' }];
  const pod = w.api.seed(PODS, bad);
  w.submit(pod);
  const waiting = await pollUntil('CreateContainerConfigError in the status', async () => {
    const p = await w.client.get(PODS, 'traversal', { namespace: 'default' });
    const s = p.status?.containerStatuses?.[0];
    return s?.state?.waiting?.reason === 'CreateContainerConfigError' ? s : undefined;
  }, { timeoutMs: 10_000, intervalMs: 20 });
  assert.match(waiting.state!.waiting!.message!, /^invalid pod spec, refusing to create its volumes: spec\.volumes\[0\]\.name: Invalid value: "\.\.\/\.\.\/\.\.\/\.\.\/etc\/cron\.d"/);
  assert.ok(w.events.some((e) => e.reason === 'FailedMount' && e.type === 'Warning'));
  assert.equal(w.fake.runtime.callsOf('RunPodSandbox').length, 0, 'no sandbox');
  assert.deepEqual(await readdir(join(w.dir, 'root')).catch(() => []), [], 'no pod directory');
});

test('a failing postStart hook kills the container (FailedPostStartHook, PostStartHookError) and the restart policy restarts it', async (t) => {
  const w = await world(t);
  w.fake.runtime.execSync = () => ({ exitCode: 1, stderr: 'not yet' });
  const spec = podObj('hooked', ['sleep', '1000']);
  spec.spec!.containers[0]!.lifecycle = { postStart: { exec: { command: ['check'] } } };
  const pod = w.api.seed(PODS, spec);
  w.submit(pod);
  await pollUntil('a second container after the first was killed', () => w.fake.runtime.callsOf('CreateContainer').length >= 2, { timeoutMs: 10_000, intervalMs: 20 });
  const reasons = w.events.map((e) => `${e.type} ${e.reason}`);
  assert.deepEqual(reasons.slice(0, 4), ['Normal Created', 'Normal Started', 'Warning FailedPostStartHook', 'Normal Killing']);
  const stop = w.fake.runtime.callsOf('StopContainer') as Array<{ timeout?: number }>;
  assert.equal(Number(stop[0]?.timeout), 7, 'killed with the pod\'s grace period');
  await pollUntil('PostStartHookError reported', () =>
    w.api.requests.some((r) => r.body.includes('"reason":"PostStartHookError"') && r.body.includes('Exec lifecycle hook ([check]) for Container \\"c\\" in Pod')), { timeoutMs: 10_000, intervalMs: 20 });
});

test('the container is not reported running until its postStart hook returns', async (t) => {
  const cleanup = cleanups(t);
  const w = await world(t);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let asked = false;
  const server = http.createServer((_req, res) => {
    asked = true;
    void held.then(() => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup(() => {
    release();
    server.close();
  });
  const spec = podObj('slowhook', ['sleep', '1000']);
  spec.spec!.containers[0]!.lifecycle = { postStart: { httpGet: { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/' } } };
  w.submit(w.api.seed(PODS, spec));
  await pollUntil('the hook was called', () => asked, { timeoutMs: 10_000, intervalMs: 20 });
  // A relist that started after the hook was called has seen the container running, and every
  // status set since has been written.
  await w.pleg.waitNewerThan(Date.now(), w.signal);
  await w.status.flushed(w.signal);
  const during = await w.client.get(PODS, 'slowhook', { namespace: 'default' });
  assert.equal(during.status?.containerStatuses?.[0]?.state?.running, undefined, 'not running while postStart runs');
  release();
  await pollUntil('Running after the hook', async () => (await w.client.get(PODS, 'slowhook', { namespace: 'default' })).status?.containerStatuses?.[0]?.state?.running, { timeoutMs: 10_000, intervalMs: 20 });
});

test("a pod's RuntimeClass handler goes to RunPodSandbox; a class that cannot be resolved is a FailedCreatePodSandBox event", async (t) => {
  const handlers: Record<string, string> = { fast: 'crun' };
  const w = await world(t, undefined, {
    runtimeHandler: async (pod) => {
      const name = pod.spec?.runtimeClassName;
      if (!name) return '';
      if (handlers[name]) return handlers[name];
      throw new AgentError('ERR_NOT_FOUND', `runtimeclass.node.k8s.io "${name}" not found`);
    },
  });
  const withClass = (name: string, runtimeClassName: string): Pod => {
    const p = podObj(name, ['sleep', '1000']);
    return { ...p, spec: { ...p.spec!, runtimeClassName } };
  };
  w.submit(w.api.seed(PODS, withClass('fast', 'fast')));
  await pollUntil('sandbox created', () => w.fake.runtime.callsOf('RunPodSandbox').length === 1, { timeoutMs: 10_000, intervalMs: 20 });
  assert.deepEqual([...w.fake.runtime.sandboxes.values()].map((s) => s.runtimeHandler), ['crun']);

  w.submit(w.api.seed(PODS, withClass('missing', 'kata')));
  const ev = await pollUntil('FailedCreatePodSandBox', () => w.events.find((e) => e.reason === 'FailedCreatePodSandBox'), { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(ev.message, 'Failed to create pod sandbox: runtimeclass.node.k8s.io "kata" not found');
  assert.equal(w.fake.runtime.callsOf('RunPodSandbox').length, 1, 'no sandbox for the unresolved class');
});
