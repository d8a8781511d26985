/**
 * Container GC against the fake CRI server (a real gRPC server) through the real client and PLEG.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, systemClock } from '@nodelet/base';
import { createCriClient } from '@nodelet/cri-client';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { Pleg } from '../pleg/pleg.js';
import { CONTAINER_NAME, MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID } from '../runtime/labels.js';
import { collectContainers } from './gc.js';

const IMAGE = 'registry.test/busybox:1.36';

test('container GC keeps the newest dead container per pod and container, and removes dead ones of gone sandboxes; running ones stay', async (t) => {
  const fake = await FakeCriServer.start();
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(async () => {
    cri.close();
    await fake.close();
  });
  fake.runtime.addImage(IMAGE);
  const rt = cri.runtime;
  const sandbox = async (uid: string): Promise<{ id: string; config: object }> => {
    const labels = { [MANAGED_BY]: 'true', [POD_UID]: uid, [POD_NAME]: `pod-${uid}`, [POD_NAMESPACE]: 'default' };
    const config = { metadata: { name: `pod-${uid}`, namespace: 'default', uid, attempt: 0 }, labels };
    const r = await rt.runPodSandbox({ config });
    return { id: r.podSandboxId, config };
  };
  const container = async (sb: { id: string; config: object }, uid: string, name: string, attempt: number, exit?: number): Promise<string> => {
    const labels = { [MANAGED_BY]: 'true', [POD_UID]: uid, [POD_NAME]: `pod-${uid}`, [POD_NAMESPACE]: 'default', [CONTAINER_NAME]: name };
    const { containerId } = await rt.createContainer({ podSandboxId: sb.id, config: { metadata: { name, attempt }, image: { image: IMAGE }, labels }, sandboxConfig: sb.config });
    await rt.startContainer({ containerId });
    if (exit !== undefined) fake.runtime.exitContainer(containerId, exit);
    return containerId;
  };
  const live = await sandbox('a');
  const dead0 = await container(live, 'a', 'app', 0, 1);
  const dead1 = await container(live, 'a', 'app', 1, 1);
  const dead2 = await container(live, 'a', 'app', 2, 1);
  const running = await container(live, 'a', 'side', 0);
  const gone = await sandbox('b');
  const orphaned = await container(gone, 'b', 'app', 0, 0);
  await rt.stopPodSandbox({ podSandboxId: gone.id });
  // The sandbox record goes, its exited container stays behind (as after a crash between the two removals).
  fake.runtime.sandboxes.delete(gone.id);

  const pleg = new Pleg({ runtime: rt, clock: systemClock, log: noopLogger, onPodChanged: () => undefined });
  await pleg.relist(AbortSignal.timeout(10_000));
  const removed = await collectContainers({
    runtime: rt, images: cri.image, pleg, log: noopLogger, imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, imageMinimumGCAgeMs: 0, pinnedImages: () => [], now: () => Date.now(),
  }, AbortSignal.timeout(10_000));
  const left = new Set((await rt.listContainers({})).containers.map((c) => c.id));
  assert.equal(removed, 3);
  assert.deepEqual([dead0, dead1, dead2, running, orphaned].map((id) => left.has(id)), [false, false, true, true, false]);
});
