/**
 * Housekeeping on the fake clock: when each job runs, that none overlaps itself, that failures
 * are logged, and what the pod passes remove. Pod sources are a real PodConfig over a real HTTP
 * API (InMemoryApiServer); pod directories are real, in a temp dir; only mount(8) is faked.
 */
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { liveCronTasks } from '@nodelet/base/cron';
import { Informer, PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import type { PodUpdate } from '../podworkers/pod-worker.js';
import { emptyObservedPod, type ObservedPod } from '../kubecontainer/observed.js';
import type { Mounter } from '../runtime/mount.js';
import { cleanupOrphanedPodDirs } from '../runtime/volumes.js';
import { PodConfig } from '../source/pod-config.js';
import { RecordingLogger } from '@nodelet/base/testing';
import { Housekeeping, JOB_TIMEOUT_MS, PERIODS, type HousekeepingOptions } from './housekeeping.js';

/** Nothing is mounted: mount(8) is the process boundary these tests stay behind. */
const noMounts: Mounter = {
  mountTmpfs: async () => assert.fail('no mounts'),
  bindMount: async () => assert.fail('no mounts'),
  unmount: async () => assert.fail('nothing to unmount'),
  mountPointsUnder: async () => [],
  isTmpfsMountPoint: async () => false,
};

const ORPHAN = '22222222-2222-4222-8222-222222222222';
const WORKER = '33333333-3333-4333-8333-333333333333';
const EMPTY = '44444444-4444-4444-8444-444444444444';
const LEFTOVER_DIR = '55555555-5555-4555-8555-555555555555';

function holding(uid: string, name: string): ObservedPod {
  const p = emptyObservedPod(uid, name, 'default');
  p.sandboxes.push({ id: `sb-${uid}`, attempt: 0, ready: true, createdAt: 0, ips: [], name, namespace: 'default', uid });
  return p;
}

type Gc = HousekeepingOptions['gc'];
const idleGc: Gc = { containers: async () => 0, images: async () => 0, cni: async () => 0 };

function setup(o: { gc?: Partial<Gc>; log?: RecordingLogger } = {}) {
  const clock = new FakeClock();
  const stop = new AbortController();
  const ready = { sourcesReady: true, wants: () => false, wanted: () => new Set<string>(), orphans: () => [] as ObservedPod[] };
  const hk = new Housekeeping({
    clock, log: o.log ?? noopLogger, pods: ready, runtimePods: () => new Map(),
    workers: { has: () => false, update: () => undefined, syncKnownPods: () => undefined },
    cleanupPodDirs: async () => [],
    gc: { ...idleGc, ...o.gc },
  });
  const running = hk.run(stop.signal);
  return { clock, stop, running };
}

test('schedule: pods and pod-dirs every 2 s, container GC every 10 s, image and CNI GC every 5 minutes, each counted from the end of its last run', async () => {
  const calls = { containers: 0, images: 0, cni: 0 };
  const { clock, stop, running } = setup({
    gc: { containers: async () => calls.containers++, images: async () => calls.images++, cni: async () => calls.cni++ },
  });
  assert.deepEqual(clock.timerDelays(), [2000, 2000, PERIODS.containers, PERIODS.images, PERIODS.cni]);
  assert.deepEqual([PERIODS.containers, PERIODS.images, PERIODS.cni], [10_000, 300_000, 300_000], 'runtime GC every 10 s; kubelet’s image GC period');
  await clock.advanceAsync(9_999);
  assert.deepEqual(calls, { containers: 0, images: 0, cni: 0 });
  await clock.advanceAsync(1);
  assert.deepEqual(calls, { containers: 1, images: 0, cni: 0 });
  await clock.advanceAsync(290_000);
  assert.deepEqual(calls, { containers: 30, images: 1, cni: 1 });
  stop.abort();
  await running;
  assert.equal(clock.pendingTimers, 0, 'nothing left scheduled after the stop');
});

test('the jobs hold one abort listener on the caller\'s signal, whatever the number of runs, and none once stopped', async () => {
  const { clock, stop, running } = setup();
  const listeners = (): number => getEventListeners(stop.signal, 'abort').length;
  // One, not one per job: the agent's signal is shared by every loop (node warns past 10).
  assert.equal(listeners(), 1);
  await clock.advanceAsync(PERIODS.images * 2);
  assert.equal(listeners(), 1, 'runs add none that stay');
  stop.abort();
  await running;
  assert.equal(listeners(), 0);
});

test('a slow job is not started again while it runs; a stuck run is aborted after its deadline and the failure logged; the schedule goes on', async () => {
  const log = new RecordingLogger();
  let starts = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const { clock, stop, running } = setup({
    log,
    gc: {
      containers: (signal) => {
        starts++;
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        // Hangs until its signal aborts, like a CRI call to a stuck runtime.
        return new Promise((_r, reject) => signal.addEventListener('abort', () => {
          inFlight--;
          reject(signal.reason);
        }, { once: true }));
      },
      images: async () => {
        throw new Error('imagefs unreadable');
      },
    },
  });
  await clock.advanceAsync(PERIODS.containers);
  assert.equal(starts, 1);
  await clock.advanceAsync(JOB_TIMEOUT_MS - 1);
  assert.equal(starts, 1, 'no second run while the first one hangs');
  await clock.advanceAsync(1);
  const timedOut = log.find(/Housekeeping job failed/).filter((e) => e.fields.job === 'container-gc');
  assert.equal(timedOut.length, 1);
  assert.match(String(timedOut[0]!.fields.err), /timed out after 120000 ms/);
  await clock.advanceAsync(PERIODS.containers);
  assert.equal(starts, 2, 'the next run comes a period after the aborted one ended');
  assert.equal(maxInFlight, 1);
  await clock.advanceAsync(PERIODS.images);
  assert.ok(log.find(/Housekeeping job failed/, 'warn').some((e) => e.fields.job === 'image-gc' && e.fields.err === 'imagefs unreadable'));
  stop.abort();
  await running;
  assert.equal(inFlight, 0, 'the stop aborted the run in flight');
});

test('pods: orphans are torn down and pod directories nobody claims removed, but only once every source has been seen', async (t) => {
  const server = await InMemoryApiServer.start();
  const root = await mkdtemp(join(tmpdir(), 'nodelet-housekeeping-'));
  const clock = new FakeClock();
  const informer = new Informer<Pod>({ client: server.client(), resource: PODS, fieldSelector: 'spec.nodeName=n1', clock, logger: noopLogger });
  const stop = new AbortController();
  t.after(async () => {
    stop.abort();
    await informer.close();
    await server.close();
    await rm(root, { recursive: true, force: true });
  });
  const wanted = server.seed(PODS, { metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } });
  const WANTED = wanted.metadata.uid!;
  for (const uid of [WANTED, ORPHAN, WORKER, LEFTOVER_DIR]) await mkdir(join(root, 'pods', uid, 'volumes'), { recursive: true });
  await mkdir(join(root, 'pods', 'not a pod uid'));

  const config = new PodConfig({ pods: informer, nodeName: 'n1', fileCheckFrequencyMs: 20_000, clock, log: noopLogger, onUpdate: () => undefined });
  const runtime = new Map([[WANTED, holding(WANTED, 'web')], [ORPHAN, holding(ORPHAN, 'gone')], [WORKER, holding(WORKER, 'terminating')], [EMPTY, emptyObservedPod(EMPTY)]]);
  const updates: PodUpdate[] = [];
  const known: Array<Set<string>> = [];
  let gauges = 0;
  const log = new RecordingLogger();
  const cgroups = new Set([WANTED, ORPHAN, WORKER, LEFTOVER_DIR]);
  const hk = new Housekeeping({
    clock, log, pods: config, runtimePods: () => runtime,
    workers: { has: (uid) => uid === WORKER, update: (u) => updates.push(u), syncKnownPods: (s) => known.push(new Set(s)) },
    cleanupPodDirs: (keep, s) => cleanupOrphanedPodDirs(root, keep, noMounts, s),
    // Pod cgroups present (a restarted agent finds its predecessor's): the same claim decides.
    cleanupPodCgroups: async (keep) => {
      const gone = [...cgroups].filter((uid) => !keep(uid));
      for (const uid of gone) cgroups.delete(uid);
      return gone;
    },
    gc: idleGc,
    afterPodCleanup: () => gauges++,
  });
  const running = hk.run(stop.signal);

  // 1. The API source has not listed yet (a restarted agent): nothing is touched.
  await clock.advanceAsync(2000);
  assert.equal(updates.length, 0);
  assert.equal(known.length, 0);
  assert.equal(gauges, 0);
  assert.deepEqual((await readdir(join(root, 'pods'))).sort(), [WANTED, ORPHAN, WORKER, LEFTOVER_DIR, 'not a pod uid'].sort());
  assert.equal(cgroups.size, 4, 'no cgroup removed before the sources are seen');

  // 2. Sources seen: the orphan gets a stand-in termination; finished workers are synced with the wanted set.
  const sources = config.run(stop.signal);
  await pollUntil('the API source seen', () => config.sourcesReady, { timeoutMs: 5000, intervalMs: 5 });
  await clock.advanceAsync(2000);
  await pollUntil('the pod-dirs pass', () => log.find(/Orphaned pod directories removed/).length > 0, { timeoutMs: 5000, intervalMs: 5 });
  assert.deepEqual(updates.map((u) => [u.pod.metadata.uid, u.pod.metadata.name, u.terminationRequested, u.gracePeriodS]), [[ORPHAN, 'gone', true, 2]]);
  assert.deepEqual(known, [new Set([WANTED])]);
  assert.equal(gauges, 1);
  // Only the directory nobody claims goes: the orphan's stays while the runtime still holds the pod.
  assert.deepEqual((await readdir(join(root, 'pods'))).sort(), [WANTED, ORPHAN, WORKER, 'not a pod uid'].sort());
  assert.deepEqual(log.find(/Orphaned pod directories removed/)[0]!.fields.podUIDs, [LEFTOVER_DIR]);
  await pollUntil('the pod cgroups pass', () => log.find(/Pod cgroups removed/).length > 0, { timeoutMs: 5000, intervalMs: 5 });
  assert.deepEqual([...cgroups].sort(), [WANTED, ORPHAN, WORKER].sort(), 'the cgroup of a pod nothing holds goes; the others stay');

  // 3. Once the runtime has let go of the orphan, its directory goes at the next pass.
  runtime.delete(ORPHAN);
  await clock.advanceAsync(2000);
  await pollUntil('the orphan’s directory removed', async () => !(await readdir(join(root, 'pods'))).includes(ORPHAN), { timeoutMs: 5000, intervalMs: 5 });
  await pollUntil('the orphan’s cgroup removed', () => !cgroups.has(ORPHAN), { timeoutMs: 5000, intervalMs: 5 });
  stop.abort();
  await Promise.all([running, sources]);
});

test('imageGCScheduleCron: every unused image is collected on each tick (real node-cron timers), and the schedule ends with the stop', { timeout: 15_000 }, async () => {
  let unusedRuns = 0;
  const stop = new AbortController();
  const log = new RecordingLogger();
  const hk = new Housekeeping({
    clock: new FakeClock(), log, pods: { sourcesReady: true, wants: () => false, wanted: () => new Set<string>(), orphans: () => [] as ObservedPod[] }, runtimePods: () => new Map(),
    workers: { has: () => false, update: () => undefined, syncKnownPods: () => undefined },
    cleanupPodDirs: async () => [],
    gc: { ...idleGc, unusedImages: async () => (++unusedRuns, 1234) },
    imageGCScheduleCron: '* * * * * *', cronAllowSeconds: true,
  });
  const running = hk.run(stop.signal);
  await pollUntil('two scheduled image GC runs', () => unusedRuns >= 2, { timeoutMs: 10_000, intervalMs: 50 });
  stop.abort();
  await running;
  assert.ok(log.find(/^Scheduled image garbage collection done$/).every((e) => e.fields.bytes === 1234));
  assert.equal(liveCronTasks('image-gc-cron'), 0, 'no node-cron task left after the stop');
});
