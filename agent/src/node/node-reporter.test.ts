/**
 * The node reporter on the fake clock against a real HTTP API (InMemoryApiServer): registration
 * with backoff, a status patch every nodeStatusUpdateFrequency, and one at once when poked (a
 * change the node must report now), or woken by a changed image list. Machine facts are this
 * machine's, read for real.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { Informer, NODES, type Node } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { resolveConfig, type KubeletConfigurationFile } from '../config/config.js';
import { RecordingLogger } from '@nodelet/base/testing';
import { NodeReporter } from './node-reporter.js';
import type { RuntimeHealth } from './node-status.js';
import type { ListedImage } from './node-images.js';

const NODE = 'n1';
const FREQUENCY_MS = 10_000;

/** `watchNode`: the node's own Node through a real informer (list and watch over HTTP), as the agent wires it. */
async function world(t: { after(fn: () => unknown): void }, file: KubeletConfigurationFile = { nodeStatusReportFrequency: '10s' }, o: { watchNode?: boolean } = {}) {
  const server = await InMemoryApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-node-reporter-'));
  const clock = new FakeClock();
  const log = new RecordingLogger();
  const stop = new AbortController();
  const health: RuntimeHealth = { runtimeReady: true, networkReady: true, cniReady: true, plegHealthy: true, runtimeName: 'containerd', runtimeVersion: '1.6.20' };
  const cidrs: string[] = [];
  /** What the image inventory holds; tests replace its contents. */
  const images: ListedImage[] = [];
  const config = resolveConfig({ nodeStatusUpdateFrequency: '10s', podCIDR: '10.244.1.0/24', ...file }, { nodeName: NODE, rootDir: dir }, 'host');
  const own = o.watchNode ? new Informer<Node>({ client: server.client(), resource: NODES, fieldSelector: `metadata.name=${NODE}`, logger: log }) : undefined;
  own?.start();
  const reporter = new NodeReporter({
    ...(own ? { watchNode: (seen: (n: Node) => void) => own.on({ onAdd: seen, onUpdate: (_old, n) => seen(n) }) } : {}),
    api: server.client(), config, clock, log, internalIP: '192.0.2.10', agentVersion: 'v1.32.0-nodelet', nodeApiPort: () => 10250,
    health: async () => ({ ...health }),
    images: () => images,
    // As the agent does: a new pod CIDR makes the CNI ready, which the node reports at once.
    onPodCIDR: (c) => {
      cidrs.push(c);
      reporter.poke();
    },
  });
  let running: Promise<void> | undefined;
  t.after(async () => {
    stop.abort();
    await running;
    await own?.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const statusPatches = (): number => server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/nodes/${NODE}/status`)).length;
  /** Waits until the status job has armed its next period (the patch before it is real I/O). */
  const armed = (): Promise<unknown> => pollUntil('the next status period armed', () => clock.timerDelays().includes(FREQUENCY_MS), { timeoutMs: 10_000, intervalMs: 2 });
  const ready = (): string | undefined => (server.store.get(NODES, undefined, NODE) as Node | undefined)?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return { server, clock, log, stop, health, cidrs, images, reporter, statusPatches, armed, ready, start: () => (running = reporter.run(stop.signal)) };
}

test('node status: registered once, then patched every nodeStatusUpdateFrequency — counted from the end of the last update', async (t) => {
  const w = await world(t);
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  const node = await registered;
  assert.equal(node.metadata.name, NODE);
  assert.deepEqual(w.cidrs, ['10.244.1.0/24'], 'the configured pod CIDR is handed on while the Node has none');
  assert.equal(w.ready(), 'True');
  await w.armed();
  const afterRegistration = w.statusPatches();
  assert.equal(afterRegistration, 2, 'registration writes the status once; the poke during registration (pod CIDR) once more, right after');

  await w.clock.advanceAsync(FREQUENCY_MS - 1);
  assert.equal(w.statusPatches(), afterRegistration, 'nothing before the period is up');
  await w.clock.advanceAsync(1);
  await pollUntil('a periodic update', () => w.statusPatches() === afterRegistration + 1, { timeoutMs: 10_000, intervalMs: 2 });
  await w.armed();
  await w.clock.advanceAsync(FREQUENCY_MS);
  await pollUntil('the next one', () => w.statusPatches() === afterRegistration + 2, { timeoutMs: 10_000, intervalMs: 2 });
  const now = new Date(w.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const heartbeat = () => (w.server.store.get(NODES, undefined, NODE) as Node).status?.conditions?.find((c) => c.type === 'Ready')?.lastHeartbeatTime;
  await pollUntil('each update carries a fresh heartbeat', () => heartbeat() === now, { timeoutMs: 10_000, intervalMs: 2 });
});

test('node status: a change is reported at once when poked, without waiting for the period; readiness changes are logged', async (t) => {
  const w = await world(t);
  w.start();
  await w.reporter.registered(AbortSignal.timeout(10_000));
  await w.armed();
  const before = w.statusPatches();
  w.health.networkReady = false;
  w.health.networkMessage = 'reason:NetworkPluginNotReady message:cni config uninitialized';
  w.reporter.poke();
  await pollUntil('the poked update', () => w.statusPatches() === before + 1, { timeoutMs: 10_000, intervalMs: 2 });
  // The server has it before the reporter has read the answer: wait for the reporter's log line.
  await pollUntil('the readiness change logged', () => w.log.find(/Node readiness changed/).length > 0, { timeoutMs: 10_000, intervalMs: 2 });
  assert.equal(w.ready(), 'False');
  assert.equal(w.clock.monotonic(), 0, 'no time passed: the change did not wait for the period');
  assert.deepEqual(w.log.find(/Node readiness changed/).map((e) => e.fields.ready), ['False']);
  await w.armed();
  assert.deepEqual(w.clock.timerDelays().filter((d) => d <= FREQUENCY_MS), [FREQUENCY_MS], 'the period starts over after the poked update');
});

test('node registration: an unavailable API is retried with backoff (200 ms doubling); stopping ends the loop', async (t) => {
  const w = await world(t);
  w.server.failNext({ method: 'POST', path: /\/nodes$/ }, { code: 503, reason: 'ServiceUnavailable' }, 3);
  w.start();
  const waits: number[] = [];
  for (let i = 0; i < 3; i++) {
    const ms = await pollUntil('a registration backoff', () => w.clock.timerDelays().find((d) => d < FREQUENCY_MS), { timeoutMs: 10_000, intervalMs: 2 });
    waits.push(ms);
    await w.clock.advanceAsync(ms);
  }
  assert.deepEqual(waits, [200, 400, 800]);
  await w.reporter.registered(AbortSignal.timeout(10_000));
  assert.equal(w.log.find(/Node registration failed/, 'warn').length, 3);
  w.stop.abort();
  await pollUntil('every timer gone', () => w.clock.pendingTimers === 0, { timeoutMs: 10_000, intervalMs: 2 });
});

test('node status: an unchanged status is written again only after nodeStatusReportFrequency; a change at once', async (t) => {
  const w = await world(t, { nodeStatusReportFrequency: '1m' });
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  await registered;
  await w.armed();
  const base = w.statusPatches();
  for (let i = 0; i < 5; i++) {
    await w.clock.advanceAsync(FREQUENCY_MS);
    await w.armed();
  }
  assert.equal(w.statusPatches(), base, 'five updates in 50 s with nothing new: no write');
  w.health.runtimeReady = false;
  await w.clock.advanceAsync(FREQUENCY_MS);
  await pollUntil('the change written at the next update', () => w.statusPatches() === base + 1, { timeoutMs: 10_000, intervalMs: 2 });
  assert.equal(w.ready(), 'False');
  await w.armed();
  // 60 s after that write the unchanged status is written again (the heartbeat).
  for (let i = 0; i < 5; i++) {
    await w.clock.advanceAsync(FREQUENCY_MS);
    await w.armed();
  }
  assert.equal(w.statusPatches(), base + 1);
  await w.clock.advanceAsync(FREQUENCY_MS);
  await pollUntil('the report after nodeStatusReportFrequency', () => w.statusPatches() === base + 2, { timeoutMs: 10_000, intervalMs: 2 });
});

test('node registration: providerID is set on the Node the agent creates', async (t) => {
  const w = await world(t, { providerID: 'nodelet://lab/n1' });
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  await registered;
  assert.equal((w.server.store.get(NODES, undefined, NODE) as Node).spec?.providerID, 'nodelet://lab/n1');
});

test('node registration: registerNode false creates no Node, waits for one and then reports its status', async (t) => {
  const w = await world(t, { registerNode: false });
  w.start();
  await pollUntil('a lookup of the Node', () => w.server.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/nodes/${NODE}`)), { timeoutMs: 10_000, intervalMs: 2 });
  assert.equal(w.server.requests.some((r) => r.method === 'POST'), false, 'no Node created');
  await w.server.client().create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, spec: {} });
  let done = false;
  void w.reporter.registered(AbortSignal.timeout(10_000)).then(() => (done = true));
  // Registration retries on the fake clock's backoff timers.
  await pollUntil('registered once the Node exists', async () => done || (await w.clock.advanceAsync(7000), false), { timeoutMs: 10_000, intervalMs: 5 });
  assert.equal(w.ready(), 'True');
});

test('node status: a pod CIDR the IPAM controller assigns after registration is seen at the next period, though no status is written', async (t) => {
  const w = await world(t, { nodeStatusReportFrequency: '5m', podCIDR: undefined });
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  await registered;
  await w.armed();
  assert.deepEqual(w.cidrs, []);
  await w.server.client().patch(NODES, NODE, { spec: { podCIDR: '10.244.7.0/24' } }, { type: 'merge' });
  await w.clock.advanceAsync(FREQUENCY_MS);
  // Nothing in the status changed, so nothing is written; the CIDR is read from the Node all the same.
  await pollUntil('the pod CIDR seen', () => w.cidrs.includes('10.244.7.0/24'), { timeoutMs: 10_000, intervalMs: 2 });
});

test('node status: a pod CIDR assigned after registration is seen through the Node watch and Ready is written at once, not at the next period', async (t) => {
  const w = await world(t, { nodeStatusReportFrequency: '5m', podCIDR: undefined }, { watchNode: true });
  // As on a fresh lab node: the network is not ready until the node has a pod CIDR.
  w.health.networkReady = false;
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  await registered;
  await w.armed();
  assert.equal(w.ready(), 'False');
  const patches = w.statusPatches();
  w.health.networkReady = true;
  await w.server.client().patch(NODES, NODE, { spec: { podCIDR: '10.244.7.0/24' } }, { type: 'merge' });
  // No clock advance: only the watch can bring the CIDR, and the poke the write.
  await pollUntil('the pod CIDR seen and Ready written', () => w.cidrs.includes('10.244.7.0/24') && w.ready() === 'True', { timeoutMs: 10_000, intervalMs: 2 });
  assert.equal(w.statusPatches(), patches + 1);
});

test('node status: images are reported largest first; the same images listed in another order write nothing; a changed list is written at once when woken, an emptied one removed', async (t) => {
  const img = (id: string, size: number, tag: string): ListedImage => ({ id, size: String(size), repoTags: [tag], repoDigests: [`${tag.split(':')[0]}@sha256:${id}`] });
  const w = await world(t, { nodeStatusReportFrequency: '5m' });
  w.images.push(img('a', 10, 'r/small:1'), img('b', 30, 'r/big:1'));
  const registered = w.reporter.registered(AbortSignal.timeout(10_000));
  w.start();
  await registered;
  await w.armed();
  const stored = () => (w.server.store.get(NODES, undefined, NODE) as Node).status?.images;
  assert.deepEqual(stored(), [
    { names: ['r/big@sha256:b', 'r/big:1'], sizeBytes: 30 },
    { names: ['r/small@sha256:a', 'r/small:1'], sizeBytes: 10 },
  ]);
  const base = w.statusPatches();
  w.images.reverse();
  for (let i = 0; i < 3; i++) {
    await w.clock.advanceAsync(FREQUENCY_MS);
    await w.armed();
  }
  w.reporter.wake();
  await w.armed();
  assert.equal(w.statusPatches(), base, 'the runtime\'s order is not a change: no write in 30 s, nor when woken');

  w.images.push(img('c', 20, 'r/mid:1'));
  w.reporter.wake();
  await pollUntil('the new image written at once', () => stored()?.length === 3, { timeoutMs: 10_000, intervalMs: 2 });
  assert.deepEqual(stored()!.map((i) => i.sizeBytes), [30, 20, 10]);
  assert.equal(w.clock.monotonic(), 3 * FREQUENCY_MS, 'woken: no period waited for');
  await w.armed();
  w.images.length = 0;
  w.reporter.wake();
  await pollUntil('the emptied list removed from the Node', () => stored() === undefined, { timeoutMs: 10_000, intervalMs: 2 });
  assert.equal(w.statusPatches(), base + 2);
});
