import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PODS } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';
import { pollUntil } from '@nodelet/base';

let h: Harness | undefined;
let skip = false;
let manifests = '';

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  // Short CrashLoopBackOff (1 s doubling to 4 s) so the doubling and the cap are seen in seconds;
  // the kubelet defaults (10 s → 300 s) are unit-tested in restart-backoff.test.ts.
  manifests = await mkdtemp(join(tmpdir(), 'nodelet-agent-it-manifests-'));
  h = await startHarness('fail', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '4s' }, staticPodPath: manifests }, 2);
});
after(async () => {
  await h?.stop();
  if (manifests) await rm(manifests, { recursive: true, force: true });
});

test('a container exiting 1 under Always goes into CrashLoopBackOff with growing delays and restartCount', { timeout: 90_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'crash', { containers: [{ name: 'c', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo dying; exit 1'] }] }));
  const runs = new Map<number, { started: number; finished: number }>();
  let sawBackOff = '';
  await pollUntil('five restarts', async () => {
    const list = await h!.agent.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.name': 'crash' } } });
    for (const c of list.containers) {
      const n = Number(c.annotations['io.kubernetes.container.restartCount']);
      if (runs.get(n)?.finished) continue;
      const st = (await h!.agent.cri.runtime.containerStatus({ containerId: c.id })).status!;
      if (st.state === 'CONTAINER_EXITED') runs.set(n, { started: Number(BigInt(st.startedAt) / 1_000_000n), finished: Number(BigInt(st.finishedAt) / 1_000_000n) });
    }
    const p = await getPod(h!, 'crash');
    const w = p.status?.containerStatuses?.[0]?.state?.waiting;
    if (w?.reason === 'CrashLoopBackOff') sawBackOff = w.message ?? '';
    return runs.size >= 5 && [0, 1, 2, 3, 4].every((i) => runs.has(i));
  }, { timeoutMs: 60_000 });
  const gaps = [1, 2, 3, 4].map((i) => (runs.get(i)!.started - runs.get(i - 1)!.finished) / 1000);
  // restart 1 is immediate, then 1 s, 2 s, 4 s (cap): each wait at least the backoff, at most ~1 relist later
  const want = [0, 1, 2, 4];
  gaps.forEach((g, i) => {
    assert.ok(g >= want[i]! - 0.25 && g <= want[i]! + 2.5, `gap ${i + 1} = ${g.toFixed(2)} s, want ≈ ${want[i]} s (gaps ${gaps.map((x) => x.toFixed(2))})`);
  });
  assert.ok(gaps[3]! > gaps[1]!, 'delays grow');
  assert.match(sawBackOff, /^back-off \d+s restarting failed container=c pod=crash_default\(/);
  const p = await getPod(h!, 'crash');
  const cs = p.status!.containerStatuses![0]!;
  assert.ok(cs.restartCount >= 4, `restartCount ${cs.restartCount}`);
  assert.equal(p.status!.phase, 'Running');
  assert.equal((cs.lastState?.terminated ?? cs.state?.terminated)?.exitCode, 1);
  assert.equal((cs.lastState?.terminated ?? cs.state?.terminated)?.reason, 'Error');
  assert.ok(h!.agent.events.recent.some((e) => e.pod === 'default/crash' && e.reason === 'BackOff'), 'BackOff event');
  await h!.api.delete(PODS, 'crash', { namespace: 'default', gracePeriodSeconds: 0 });
});

test('a bad image gives ErrImagePull, then ImagePullBackOff', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const image = `${h!.rt.registryHost}/does-not-exist:1.0`;
  // Every status write is seen through a watch (polling could miss the short ErrImagePull phase).
  const seen: string[] = [];
  const stop = new AbortController();
  const watching = (async () => {
    try {
      for await (const ev of h!.api.watch(PODS, { namespace: 'default', fieldSelector: 'metadata.name=badimg', signal: stop.signal })) {
        const w = (ev.object as { status?: { containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }> } }).status?.containerStatuses?.[0]?.state?.waiting;
        if (w?.reason && seen.at(-1) !== w.reason) seen.push(w.reason);
      }
    } catch {
      // stop.abort() ends the watch; what it saw is asserted below, a watch that broke early fails there.
    }
  })();
  await h!.api.create(PODS, podSpec(h!, 'badimg', { containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent' }] }));
  await pollUntil('ErrImagePull then ImagePullBackOff', async () => seen.includes('ErrImagePull') && seen.includes('ImagePullBackOff'), { timeoutMs: 30_000, intervalMs: 50 }).catch(async (err: Error) => {
    throw new Error(`${err.message}; seen ${seen}; status ${JSON.stringify((await getPod(h!, 'badimg')).status)}`);
  });
  stop.abort();
  await watching;
  assert.ok(seen.indexOf('ErrImagePull') < seen.indexOf('ImagePullBackOff'), `order: ${seen}`);
  const p = await getPod(h!, 'badimg');
  assert.equal(p.status!.phase, 'Pending');
  assert.match(p.status!.containerStatuses![0]!.state!.waiting!.message!, /does-not-exist/);
  const reasons = h!.agent.events.recent.filter((e) => e.pod === 'default/badimg').map((e) => e.reason);
  assert.ok(reasons.includes('Pulling') && reasons.includes('Failed') && reasons.includes('BackOff'), `events ${reasons}`);
  await h!.api.delete(PODS, 'badimg', { namespace: 'default', gracePeriodSeconds: 0 });
});

test('a static pod runs from --pod-manifest-path and appears as a mirror pod; removing the file removes both', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const name = `static-web-${h!.nodeName}`;
  await writeFile(join(manifests, 'web.yaml'), [
    'apiVersion: v1',
    'kind: Pod',
    'metadata: { name: static-web, labels: { tier: node } }',
    'spec:',
    '  terminationGracePeriodSeconds: 1',
    '  containers:',
    `  - { name: c, image: "${h!.rt.images.busybox}", imagePullPolicy: IfNotPresent, command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 0.2; done"] }`,
  ].join('\n'));
  const mirror = await pollUntil('mirror pod Running', async () => {
    const p = await getPod(h!, name).catch(() => undefined);
    return p?.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 30_000 });
  assert.ok(mirror.metadata.annotations?.['kubernetes.io/config.mirror'], 'mirror annotation');
  assert.equal(mirror.metadata.annotations?.['kubernetes.io/config.source'], 'file');
  assert.equal(mirror.metadata.labels?.tier, 'node');
  assert.equal(mirror.spec?.nodeName, h!.nodeName);
  const staticUid = mirror.metadata.annotations!['kubernetes.io/config.hash']!;
  assert.notEqual(staticUid, mirror.metadata.uid, 'the mirror pod has its own UID');
  const sandboxes = await h!.agent.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': staticUid } } });
  assert.equal(sandboxes.items.length, 1, 'the static pod runs under its own UID');

  await rm(join(manifests, 'web.yaml'));
  await pollUntil('mirror pod deleted and containers gone', async () => {
    const gone = await getPod(h!, name).then(() => false, () => true);
    const left = await h!.agent.cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': staticUid } } });
    return gone && left.items.length === 0;
  }, { timeoutMs: 30_000 });
});
