import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PODS } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';
import { pollUntil } from '@nodelet/base';
import https from 'node:https';
import { readdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';

/** GET on the agent's node API with the API server's client certificate (what `kubectl logs` reaches). */
function nodeGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const pki = join(h!.dir, 'server', 'pki');
    const cert = readFileSync(join(pki, 'apiserver-kubelet-client.crt'));
    const key = readFileSync(join(pki, 'apiserver-kubelet-client.key'));
    const req = https.get({ host: '127.0.0.1', port: h!.agent.nodeApiPort, path, cert, key, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

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
  // Log sizes checked every second (kubelet: 10 s) so a fast writer is rotated while the test watches.
  h = await startHarness('fail', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '4s' }, staticPodPath: manifests, containerLogMonitorInterval: '1s' }, 2);
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
  // Every status write is seen through a watch (polling could miss the short ErrImagePull phase),
  // from a resourceVersion read before the create: a watch from "now" could open after the first writes.
  const seen: string[] = [];
  const stop = new AbortController();
  const from = (await h!.api.list(PODS, { namespace: 'default' })).metadata.resourceVersion;
  const watching = (async () => {
    try {
      for await (const ev of h!.api.watch(PODS, { namespace: 'default', fieldSelector: 'metadata.name=badimg', resourceVersion: from, signal: stop.signal })) {
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

test('a failing postStart hook kills the container with FailedPostStartHook and the restart policy restarts it', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'poststart', {
    containers: [{ name: 'c', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '1000'], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo not ready >&2; exit 7'] } } } }],
  }));
  const p = await pollUntil('restarted after the hook failed', async () => {
    const pod = await getPod(h!, 'poststart');
    return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? pod : undefined;
  }, { timeoutMs: 40_000 });
  const events = h!.agent.events.recent.filter((e) => e.pod === 'default/poststart').map((e) => e.reason);
  assert.ok(events.includes('FailedPostStartHook'), `events: ${events.join(' ')}`);
  assert.ok(events.indexOf('Killing') > events.indexOf('FailedPostStartHook'), 'killed after the hook failed');
  const last = p.status!.containerStatuses![0]!.lastState?.terminated;
  assert.ok(last, 'the killed container is the last state');
  const list = await h!.agent.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.name': 'poststart' } } });
  assert.equal(list.containers.filter((c) => c.state === 'CONTAINER_RUNNING').length <= 1, true, 'never two running at once');
  await h!.api.delete(PODS, 'poststart', { namespace: 'default', gracePeriodSeconds: 0 });
});

test('preStop runs before SIGTERM: the hook and the SIGTERM handler write to one hostPath file in that order', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-agent-it-prestop-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await h!.api.create(PODS, podSpec(h!, 'prestop', {
    terminationGracePeriodSeconds: 20,
    volumes: [{ name: 'h', hostPath: { path: dir } }],
    containers: [{
      name: 'c',
      image: h!.rt.images.busybox,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', 'trap "echo sigterm >> /h/order; exit 0" TERM; while true; do sleep 0.1; done'],
      volumeMounts: [{ name: 'h', mountPath: '/h' }],
      // The hook takes a second, so SIGTERM coming early would show up as the first line.
      lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /h/order; sleep 1'] } } },
    }],
  }));
  await pollUntil('running', async () => (await getPod(h!, 'prestop')).status?.containerStatuses?.[0]?.state?.running, { timeoutMs: 30_000 });
  const started = Date.now();
  await h!.api.delete(PODS, 'prestop', { namespace: 'default' });
  await pollUntil('pod gone', async () => getPod(h!, 'prestop').then(() => false, () => true), { timeoutMs: 30_000 });
  assert.equal(await readFile(join(dir, 'order'), 'utf8'), 'prestop\nsigterm\n');
  assert.ok(Date.now() - started < 15_000, 'the container exited on SIGTERM, not at the end of the grace period');
});

test('a 200 MiB log is rotated (10Mi, 5 files); --tail=10 answers fast with flat memory; --previous after a restart', { timeout: 240_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const line = 'log-line-0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz';
  await h!.api.create(PODS, podSpec(h!, 'chatty', {
    volumes: [{ name: 'd', emptyDir: {} }],
    containers: [{
      name: 'c',
      image: h!.rt.images.busybox,
      imagePullPolicy: 'IfNotPresent',
      volumeMounts: [{ name: 'd', mountPath: '/d' }],
      // First run: 200 MiB as fast as the runtime takes it, a marker, then exit (restart). Second run: quiet.
      command: ['sh', '-c', `if [ ! -e /d/done ]; then yes ${line} | head -c 209715200; echo; echo first-run-end; touch /d/done; sleep 3; exit 1; fi; echo second-run; exec sleep 1000`],
    }],
  }));
  const pod = await pollUntil('running', async () => {
    const p = await getPod(h!, 'chatty');
    return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
  }, { timeoutMs: 30_000 });
  const logDir = join(h!.agent.config.podLogsDir, `default_chatty_${pod.metadata.uid}`, 'c');
  let most = 0;
  let rotatedSeen = false;
  await pollUntil('the first run ended and the container restarted', async () => {
    // `.tmp` is a compression in flight (its source is still there); it is not a kept file.
    const files = (await readdir(logDir).catch(() => [] as string[])).filter((n) => n.startsWith('0.log') && !n.endsWith('.tmp'));
    most = Math.max(most, files.length);
    rotatedSeen ||= files.some((n) => n.endsWith('.gz'));
    return ((await getPod(h!, 'chatty')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
  }, { timeoutMs: 180_000, intervalMs: 200 });
  assert.ok(rotatedSeen, 'older rotated files were compressed');
  assert.ok(most <= 5, `at most 5 files of 0.log at any time, saw ${most}`);

  // --previous: the first run's current file still ends with its last lines.
  const prev = await nodeGet('/containerLogs/default/chatty/c?previous=true&tailLines=2');
  assert.equal(prev.status, 200);
  assert.match(prev.body, /\nfirst-run-end\n$|^first-run-end\n$/);

  // --tail=10 of the first run's logs, repeated: fast, and memory does not follow the log's size.
  // RSS is the whole test process (agent, API server and test share it), so the bound is loose: a
  // reader that loaded a 10+ MiB file per request would add tens of MiB over 20 requests.
  const rssBefore = process.memoryUsage().rss;
  for (let i = 0; i < 20; i++) {
    const r = await nodeGet('/containerLogs/default/chatty/c?previous=true&tailLines=10');
    const got = r.body.split('\n').filter(Boolean);
    assert.equal(got.length, 10, r.body.slice(0, 300));
    assert.equal(got.at(-1), 'first-run-end');
  }
  const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  assert.ok(grownMiB < 16, `RSS grew ${grownMiB.toFixed(1)} MiB over 20 tail requests`);
  const now = await nodeGet('/containerLogs/default/chatty/c');
  assert.equal(now.body, 'second-run\n');
  await h!.api.delete(PODS, 'chatty', { namespace: 'default', gracePeriodSeconds: 0 });
});
