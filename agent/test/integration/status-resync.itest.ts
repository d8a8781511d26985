import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PODS, requestChannel, type Pod, type RequestDiagnostic } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { skipUnlessRoot, startHarness, podSpec, getPod } from './harness.js';

test('idle running pods cost no status PATCH at the status manager resync (every pod was PATCHed every 10 s: a null lastProbeTime against the protobuf informer copy)', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('resync');
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  for (const name of ['idle-a', 'idle-b']) {
    await h.api.create(PODS, podSpec(h, name, { containers: [{ name: 'c', image: img, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] }));
  }
  const isReady = (p: Pod | undefined) => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const pods = await pollUntil('both pods Ready', async () => {
    const ps = await Promise.all(['idle-a', 'idle-b'].map((n) => getPod(h, n)));
    return ps.every(isReady) ? ps : undefined;
  }, { timeoutMs: 60_000 });
  // The agent's informer copies (what a resync compares with) have caught up with the Ready write.
  await pollUntil('the agent sees both pods Ready', () => pods.every((p) => isReady(h.agent.pods.get(p.metadata.uid!))), { timeoutMs: 10_000 });
  const patches: string[] = [];
  const onRequest = (m: unknown): void => {
    const d = m as RequestDiagnostic;
    if (d.method === 'PATCH' && /\/pods\/[^/]+\/status$/.test(d.path)) patches.push(d.path);
  };
  requestChannel.subscribe(onRequest);
  t.after(() => requestChannel.unsubscribe(onRequest));
  // Proving an absence takes a window: two resyncs of the status manager (every 10 s).
  await sleep(22_000);
  assert.deepEqual(patches, [], 'no status write for pods whose status did not change');
});
