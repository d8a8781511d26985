/**
 * The API server away (issue 15, degraded modes): the agent keeps its pods running and restarts
 * crashed containers from what it knows; when the server returns, the first status it writes for
 * a pod is the latest one (no backlog of stale patches replayed in order).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PODS, type Pod } from '@nodelet/api';
import { hasCode, pollUntil } from '@nodelet/base';
import { getPod, podSpec, skipUnlessRoot, startHarness, type Harness } from './harness.js';

async function containersOf(h: Harness, uid: string) {
  return (await h.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': uid } } })).containers;
}

const maxAttempt = (cs: Awaited<ReturnType<typeof containersOf>>): number => Math.max(-1, ...cs.map((c) => c.metadata?.attempt ?? 0));

test('API server away: pods keep running, a crashing container is restarted, and on return the latest status is written first', { timeout: 180_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('api-away', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '2s' } }, 12);
  t.after(async () => {
    // A failure while the server was stopped must not leave the harness without it.
    await h.api.get(PODS, 'steady', { namespace: 'default' }).catch(async (err: unknown) => {
      if (hasCode(err, 'ERR_UNAVAILABLE')) await h.startServer();
    });
    await h.stop();
  });
  const image = h.rt.images.busybox;
  await h.api.create(PODS, podSpec(h, 'steady', { containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 0.2; done"] }] }));
  await h.api.create(PODS, podSpec(h, 'crasher', { containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 1; exit 3'] }] }));
  const steady = await pollUntil('steady Ready', async () => {
    const p = await getPod(h, 'steady');
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
  }, { timeoutMs: 60_000 });
  const crasher = await pollUntil('crasher restarted once (reported)', async () => {
    const p = await getPod(h, 'crasher');
    return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? p : undefined;
  }, { timeoutMs: 60_000 });
  const steadyId = steady.status!.containerStatuses![0]!.containerID!;

  await h.stopServer();
  await assert.rejects(h.api.get(PODS, 'steady', { namespace: 'default' }), (err: unknown) => hasCode(err, 'ERR_UNAVAILABLE'), 'the server is away');
  const atStop = maxAttempt(await containersOf(h, crasher.metadata.uid!));
  await pollUntil('crasher restarted twice more while the server is away', async () => maxAttempt(await containersOf(h, crasher.metadata.uid!)) >= atStop + 2, { timeoutMs: 60_000, intervalMs: 200 });
  const steadyNow = await containersOf(h, steady.metadata.uid!);
  assert.deepEqual(steadyNow.map((c) => [`containerd://${c.id}`, c.state]), [[steadyId, 'CONTAINER_RUNNING']], 'the running pod is untouched');

  const latest = maxAttempt(await containersOf(h, crasher.metadata.uid!));
  await h.startServer();
  // Every status write since the stop, in order: the watch replays them from a revision before it.
  // Writes from before the stop carry at most `atStop`; anything the agent queued while the server
  // was away would carry atStop + 1 and come first.
  const stop = new AbortController();
  t.after(() => stop.abort());
  const written: number[] = [];
  const watching = (async () => {
    for await (const ev of h.api.watch(PODS, { namespace: 'default', fieldSelector: 'metadata.name=crasher', resourceVersion: crasher.metadata.resourceVersion!, signal: stop.signal })) {
      if (ev.type === 'ERROR') throw new Error(`watch ended: ${JSON.stringify(ev.object)}`);
      const n = (ev.object as Pod).status?.containerStatuses?.[0]?.restartCount ?? -1;
      if (n > atStop) written.push(n);
    }
  })().catch((err: unknown) => {
    if (!stop.signal.aborted) throw err;
  });
  await pollUntil('crasher status caught up', () => written.some((n) => n >= latest), { timeoutMs: 30_000, intervalMs: 100 });
  stop.abort();
  await watching;
  t.diagnostic(`restartCounts written after the return: ${written.join(', ')} (CRI attempt ${latest} before it)`);
  assert.ok(written[0]! >= latest, `the first write after the return carries the latest restartCount (${latest}), not a stale one: ${written.join(', ')}`);
  for (let i = 1; i < written.length; i++) assert.ok(written[i]! >= written[i - 1]!, `never older after newer: ${written.join(', ')}`);

  const back = await getPod(h, 'steady');
  const cs = back.status!.containerStatuses![0]!;
  assert.equal(cs.containerID, steadyId);
  assert.equal(cs.restartCount, 0);
  assert.ok(back.status!.conditions!.some((c) => c.type === 'Ready' && c.status === 'True'));
});
