/**
 * Runtime GC against the fake CRI server (a real gRPC server) through the real client and PLEG.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '@nodelet/base';
import { RecordingLogger } from '@nodelet/base/testing';
import type { Pod } from '@nodelet/api';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { Pleg } from '../pleg/pleg.js';
import { CONTAINER_NAME, MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID } from '../kubecontainer/labels.js';
import { RuntimeGc } from './runtime-gc.js';

const IMAGE = 'registry.test/busybox:1.36';
/** What containerd reports as the creation time of a sandbox whose RunPodSandbox never returned: Go's zero time. */
const GO_ZERO_TIME_NS = -6795364578871345152n;

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const fake = await FakeCriServer.start();
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(async () => {
    cri.close();
    await fake.close();
  });
  fake.runtime.addImage(IMAGE);
  const rt = cri.runtime;
  const labelsOf = (uid: string, managed: boolean): Record<string, string> =>
    managed ? { [MANAGED_BY]: 'true', [POD_UID]: uid, [POD_NAME]: `pod-${uid}`, [POD_NAMESPACE]: 'default' } : { app: 'foreign' };
  const sandbox = async (uid: string, attempt: number, managed = true): Promise<{ id: string; config: object }> => {
    const config = { metadata: { name: `pod-${uid}`, namespace: 'default', uid, attempt }, labels: labelsOf(uid, managed) };
    const r = await rt.runPodSandbox({ config });
    return { id: r.podSandboxId, config };
  };
  const container = async (sb: { id: string; config: object }, uid: string, name: string, attempt: number, then: 'created' | 'running' | number, managed = true): Promise<string> => {
    const labels = { ...labelsOf(uid, managed), [CONTAINER_NAME]: name };
    const { containerId } = await rt.createContainer({ podSandboxId: sb.id, config: { metadata: { name, attempt }, image: { image: IMAGE }, labels }, sandboxConfig: sb.config });
    if (then === 'created') return containerId;
    await rt.startContainer({ containerId });
    if (typeof then === 'number') fake.runtime.exitContainer(containerId, then);
    return containerId;
  };
  const log = new RecordingLogger();
  const events: Array<{ pod: string; reason: string; message: string }> = [];
  const pleg = new Pleg({ runtime: rt, clock: systemClock, log, onPodChanged: () => undefined });
  const pods = new Map<string, Pod>();
  const gone = new Set<string>();
  const gc = new RuntimeGc({
    runtime: rt, pleg, log, now: () => Date.now(),
    events: { event: (pod, _type, reason, message) => events.push({ pod: pod.metadata.name!, reason, message }) },
    pod: (uid) => pods.get(uid),
    podGone: (uid) => gone.has(uid),
  });
  const pass = async () => {
    await pleg.relist(AbortSignal.timeout(10_000));
    return gc.collect(AbortSignal.timeout(10_000));
  };
  return { fake, rt, sandbox, container, log, events, pods, gone, pass };
}

test('after a kill during a burst: the cut-short sandbox is stopped (network released) then removed, never-started attempts go, foreign objects stay; each removal logged once, with an event on the pod', async (t) => {
  const { fake, rt, sandbox, container, log, events, pods, pass } = await setup(t);
  // Pod a: RunPodSandbox of attempt 0 was cut short (NotReady, zero time); attempt 1 runs.
  const cut = await sandbox('a', 0);
  await rt.stopPodSandbox({ podSandboxId: cut.id });
  fake.runtime.sandboxes.get(cut.id)!.createdAt = GO_ZERO_TIME_NS;
  const sbA = await sandbox('a', 1);
  const runA = await container(sbA, 'a', 'c', 0, 'running');
  // Pod b: its sandbox survived; attempt 0 of its container was created, never started; attempt 1 runs.
  const sbB = await sandbox('b', 0);
  const createdB = await container(sbB, 'b', 'c', 0, 'created');
  const runB = await container(sbB, 'b', 'c', 1, 'running');
  // Not nodelet's: no labels. Dead, but never touched.
  const foreign = await sandbox('f', 0, false);
  const foreignCt = await container(foreign, 'f', 'c', 0, 'created', false);
  await rt.stopPodSandbox({ podSandboxId: foreign.id });
  const foreign2 = await sandbox('f', 1, false);
  await rt.stopPodSandbox({ podSandboxId: foreign2.id });
  pods.set('a', { metadata: { name: 'pod-a', namespace: 'default', uid: 'a' } });
  pods.set('b', { metadata: { name: 'pod-b', namespace: 'default', uid: 'b' } });

  assert.deepEqual(await pass(), { containers: 1, sandboxes: 1 });
  const sandboxes = new Set((await rt.listPodSandbox({})).items.map((s) => s.id));
  const containers = new Set((await rt.listContainers({})).containers.map((c) => c.id));
  assert.deepEqual([cut.id, sbA.id, sbB.id, foreign.id, foreign2.id].map((id) => sandboxes.has(id)), [false, true, true, true, true]);
  assert.deepEqual([runA, createdB, runB, foreignCt].map((id) => containers.has(id)), [true, false, true, true]);
  const calls = fake.runtime.calls.filter((c) => (c.request as { podSandboxId?: string }).podSandboxId === cut.id).map((c) => c.rpc);
  assert.deepEqual(calls.slice(-2), ['StopPodSandbox', 'RemovePodSandbox'], 'the network is released through CRI before the removal');

  const removals = log.find(/^Garbage collected/);
  assert.deepEqual(removals.map((e) => [e.msg, e.fields.sandboxId ?? e.fields.containerId, e.fields.reason]), [
    ['Garbage collected container', createdB, 'NeverStarted'],
    ['Garbage collected sandbox', cut.id, 'DeadSandbox'],
  ]);
  assert.deepEqual(events.map((e) => [e.pod, e.reason]), [['pod-b', 'GarbageCollected'], ['pod-a', 'GarbageCollected']]);
  assert.match(events[1]!.message, /^Removed sandbox [0-9a-f]{13}: not ready and not the newest sandbox of its pod$/);

  assert.deepEqual(await pass(), { containers: 0, sandboxes: 0 }, 'a second pass finds nothing');
  assert.equal(log.find(/^Garbage collected/).length, 2, 'nothing logged twice');
});

test('a deleted pod: dead containers and sandboxes go without an event; a failed removal is warned about once and holds back its sandbox', async (t) => {
  const { fake, rt, sandbox, container, log, events, gone, pass } = await setup(t);
  const sb = await sandbox('d', 0);
  const dead = await container(sb, 'd', 'c', 0, 1);
  await rt.stopPodSandbox({ podSandboxId: sb.id });
  gone.add('d');

  fake.runtime.injectError('RemoveContainer', 'INTERNAL', 'disk on fire', 2);
  assert.deepEqual(await pass(), { containers: 0, sandboxes: 0 });
  assert.deepEqual(await pass(), { containers: 0, sandboxes: 0 });
  assert.equal(log.find(/Container garbage collection failed/, 'warn').length, 1, 'warned once');
  assert.equal((await rt.listPodSandbox({})).items.length, 1, 'the sandbox waits for its container');

  assert.deepEqual(await pass(), { containers: 1, sandboxes: 1 });
  assert.deepEqual(log.find(/^Garbage collected/).map((e) => [e.fields.containerId ?? e.fields.sandboxId, e.fields.reason]), [[dead, 'PodDeleted'], [sb.id, 'PodDeleted']]);
  assert.deepEqual(events, [], 'no pod to put an event on');
});
