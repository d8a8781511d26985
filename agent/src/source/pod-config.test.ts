/**
 * PodConfig against a real HTTP API (InMemoryApiServer) and a real manifest directory, on the
 * fake clock: the informer's retries and the directory's re-reads happen only when a test
 * advances time.
 */
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { Informer, PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import type { PodUpdate } from '../podworkers/pod-worker.js';
import { emptyObservedPod, type ObservedPod } from '../kubecontainer/observed.js';
import { PodConfig } from './pod-config.js';
import { CONFIG_MIRROR } from '../kubecontainer/pod-update.js';

const NODE = 'n1';
const FILE_CHECK_MS = 20_000;

const pod = (name: string, nodeName = NODE, annotations?: Record<string, string>): Pod => ({
  metadata: { name, namespace: 'default', annotations },
  spec: { nodeName, containers: [{ name: 'c', image: 'x' }], terminationGracePeriodSeconds: 30 },
});

const manifest = (name: string, image = 'busybox'): string => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image }], terminationGracePeriodSeconds: 7 } });

/** A runtime pod holding a sandbox, as the PLEG would report it. */
function running(uid: string): ObservedPod {
  const p = emptyObservedPod(uid, 'p', 'default');
  p.sandboxes.push({ id: `sb-${uid}`, attempt: 0, ready: true, createdAt: 0, ips: [], name: 'p', namespace: 'default', uid });
  return p;
}

async function world(t: { after(fn: () => unknown): void }, o: { staticPodPath?: (dir: string) => string } = {}) {
  const server = await InMemoryApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pod-config-'));
  const clock = new FakeClock();
  const api = server.client();
  const informer = new Informer<Pod>({ client: api, resource: PODS, fieldSelector: `spec.nodeName=${NODE}`, clock, logger: noopLogger });
  const updates: PodUpdate[] = [];
  const config = new PodConfig({
    pods: informer, nodeName: NODE, staticPodPath: o.staticPodPath?.(dir), fileCheckFrequencyMs: FILE_CHECK_MS, clock, log: noopLogger,
    onUpdate: (u) => updates.push(u),
  });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  t.after(async () => {
    stop.abort();
    await running;
    await informer.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const start = (): void => {
    running = config.run(stop.signal);
  };
  const names = (pred: (u: PodUpdate) => boolean = () => true) => updates.filter(pred).map((u) => u.pod.metadata.name);
  return { server, api, dir, clock, informer, config, updates, start, stop, names, done: () => running };
}

test('merge: API pods of this node and the manifests are both wanted and sent to the workers; mirror pods and other nodes’ pods are not', async (t) => {
  const w = await world(t, { staticPodPath: (d) => d });
  w.server.seed(PODS, pod('api-1'));
  w.server.seed(PODS, pod('elsewhere', 'n2'));
  w.server.seed(PODS, pod(`static-${NODE}`, NODE, { [CONFIG_MIRROR]: 'hash' }));
  await writeFile(join(w.dir, 'static.yaml'), manifest('static'));
  w.start();
  await pollUntil('both sources seen', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  assert.deepEqual(w.names().sort(), ['api-1', `static-${NODE}`]);
  const staticPod = w.updates.find((u) => u.pod.metadata.annotations?.['kubernetes.io/config.source'] === 'file')!.pod;
  const apiPod = w.updates.find((u) => u.pod.metadata.name === 'api-1')!.pod;
  assert.ok(!w.updates.some((u) => u.pod.metadata.annotations?.[CONFIG_MIRROR]), 'the mirror pod is never run');
  assert.ok(!w.updates.some((u) => u.terminationRequested));
  assert.deepEqual(w.config.wanted(), new Set([apiPod.metadata.uid, staticPod.metadata.uid]));
  assert.ok(w.config.inApi(apiPod.metadata.uid!) && !w.config.inApi(staticPod.metadata.uid!));
  assert.ok(w.config.isStaticWanted(staticPod.metadata.uid!));
  assert.equal(w.config.find('default', `static-${NODE}`), staticPod, 'the static pod, not its mirror');
  assert.equal(w.config.find('default', 'elsewhere'), undefined);
});

test('API changes: a deletionTimestamp asks for termination with its grace; a deleted pod terminates with grace 0 and is no longer wanted', async (t) => {
  const w = await world(t);
  const seeded = w.server.seed(PODS, pod('web'));
  w.start();
  await pollUntil('first list', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  await pollUntil('the watch', () => w.server.watchCount === 1, { timeoutMs: 5000, intervalMs: 5 });
  await w.api.create(PODS, pod('late'));
  await pollUntil('a watched add', () => w.names().includes('late'), { timeoutMs: 5000, intervalMs: 5 });
  await w.api.delete(PODS, 'web', { namespace: 'default', gracePeriodSeconds: 12 });
  const graceful = await pollUntil('the graceful delete', () => w.updates.find((u) => u.pod.metadata.name === 'web' && u.terminationRequested), { timeoutMs: 5000, intervalMs: 5 });
  assert.equal(graceful.gracePeriodS, 12);
  assert.ok(w.config.wants(seeded.metadata.uid!), 'still wanted while terminating: the worker finishes it');
  await w.api.delete(PODS, 'late', { namespace: 'default', gracePeriodSeconds: 0 });
  const gone = await pollUntil('the removal', () => w.updates.find((u) => u.pod.metadata.name === 'late' && u.terminationRequested), { timeoutMs: 5000, intervalMs: 5 });
  assert.equal(gone.gracePeriodS, 0);
  assert.ok(!w.config.wants(gone.pod.metadata.uid!));
});

test('file source: re-read every fileCheckFrequency; a removed manifest terminates its pod with the pod’s grace, an edited one replaces it', async (t) => {
  const w = await world(t, { staticPodPath: (d) => d });
  await writeFile(join(w.dir, 'a.yaml'), manifest('a'));
  w.start();
  await pollUntil('first read', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  const first = w.updates.find((u) => u.pod.metadata.name === `a-${NODE}`)!.pod;
  await rm(join(w.dir, 'a.yaml'));
  await writeFile(join(w.dir, 'b.json'), manifest('b'));
  await w.clock.advanceAsync(FILE_CHECK_MS - 1);
  assert.deepEqual(w.names(), [`a-${NODE}`], 'nothing is read before the period is up');
  await w.clock.advanceAsync(1);
  await pollUntil('the second read', () => w.names().includes(`b-${NODE}`), { timeoutMs: 5000, intervalMs: 5 });
  const stopA = w.updates.find((u) => u.pod.metadata.uid === first.metadata.uid && u.terminationRequested)!;
  assert.equal(stopA.gracePeriodS, 7);
  assert.ok(!w.config.wants(first.metadata.uid!));

  const b = w.updates.find((u) => u.pod.metadata.name === `b-${NODE}`)!.pod;
  await writeFile(join(w.dir, 'b.json'), manifest('b', 'busybox:2'));
  await pollUntil('the next read armed', () => w.clock.timerDelays().includes(FILE_CHECK_MS), { timeoutMs: 5000, intervalMs: 5 });
  await w.clock.advanceAsync(FILE_CHECK_MS);
  await pollUntil('the edit read', () => w.updates.some((u) => u.pod.metadata.uid === b.metadata.uid && u.terminationRequested), { timeoutMs: 5000, intervalMs: 5 });
  const edited = w.updates.filter((u) => u.pod.metadata.name === `b-${NODE}` && !u.terminationRequested).map((u) => u.pod.metadata.uid);
  assert.equal(edited.length, 2);
  assert.notEqual(edited[1], b.metadata.uid, 'an edit is a new pod (new UID)');
});

test('seen sources: no orphans before the API has listed once, nor before the manifest directory was read; then runtime pods nobody wants', async (t) => {
  const w = await world(t, { staticPodPath: (d) => join(d, 'manifests') });
  const wanted = w.server.seed(PODS, pod('wanted'));
  // The API's first list fails: the informer retries after its backoff, on the fake clock.
  w.server.failNext({ method: 'GET', path: /\/pods$/ }, { code: 500 });
  // The manifest path is a file: reading it fails until it becomes a directory.
  await writeFile(join(w.dir, 'manifests'), 'not a directory');
  w.start();
  const runtime = [running(wanted.metadata.uid!), running('orphan'), running('has-worker'), emptyObservedPod('empty')];
  const orphans = () => w.config.orphans(runtime, (uid) => uid === 'has-worker').map((p) => p.uid);
  await pollUntil('the failed list', () => w.server.requests.some((r) => r.path.endsWith('/pods')), { timeoutMs: 5000, intervalMs: 5 });
  await new Promise((r) => setImmediate(r));
  assert.equal(w.config.sourcesReady, false);
  assert.deepEqual(orphans(), [], 'a restarted agent kills nothing before its first list');

  await w.clock.advanceAsync(1000);
  await pollUntil('the API listed', () => w.informer.hasSynced(), { timeoutMs: 5000, intervalMs: 5 });
  assert.equal(w.config.sourcesReady, false, 'the file source is not seen yet');
  assert.deepEqual(orphans(), []);

  await rm(join(w.dir, 'manifests'));
  await mkdir(join(w.dir, 'manifests'));
  await w.clock.advanceAsync(FILE_CHECK_MS);
  await pollUntil('the directory read', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  assert.deepEqual(orphans(), ['orphan'], 'only the pod no source wants, no worker has, and that holds something');
});

test('re-reading the directory adds no listener to the long-lived signal (the old loop added one per read)', async (t) => {
  const w = await world(t, { staticPodPath: (d) => d });
  w.start();
  await pollUntil('sources seen', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  const listeners = getEventListeners(w.stop.signal, 'abort').length;
  for (let i = 0; i < 20; i++) {
    await pollUntil('the next read armed', () => w.clock.timerDelays().includes(FILE_CHECK_MS), { timeoutMs: 5000, intervalMs: 2 });
    await w.clock.advanceAsync(FILE_CHECK_MS);
  }
  assert.equal(getEventListeners(w.stop.signal, 'abort').length, listeners);
});

test('run ends when its signal aborts: no more reads, handlers removed', async (t) => {
  const w = await world(t, { staticPodPath: (d) => d });
  w.start();
  await pollUntil('sources seen', () => w.config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  w.stop.abort();
  await w.done();
  assert.equal(w.clock.pendingTimers, 0, 'the file job is stopped');
  await w.api.create(PODS, pod('after'));
  await pollUntil('the shared informer (still open) has it', () => w.informer.get('default/after'), { timeoutMs: 5000, intervalMs: 5 });
  assert.ok(!w.names().includes('after'), 'a stopped PodConfig sends nothing more');
});
