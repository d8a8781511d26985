// The scheduler and controllers against the real in-process API server (SQLite in a temp dir),
// with agent-less nodes: the test plays the agent (marks pods ready, finishes graceful deletes).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiClient, DEPLOYMENTS, LEASES, NODES, PODS, REPLICASETS, type Deployment, type Node, type Pod } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startControlPlane } from '../../src/control-plane.js';
import { startControllerManager } from '../../src/controllers/index.js';
import { startScheduler } from '../../src/scheduler/index.js';
import { cleanups } from '@nodelet/base/testing';

const iso = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function fakeNode(name: string): Node {
  const now = iso();
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '50Gi' },
      capacity: { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '50Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'fake node', lastHeartbeatTime: now, lastTransitionTime: now }],
    },
  };
}

function deployment(replicas: number, image: string): Deployment {
  return {
    metadata: { name: 'hello', namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'hello' } },
      template: { metadata: { labels: { app: 'hello' } }, spec: { containers: [{ name: 'main', image, resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } },
    },
  };
}

/** What an agent would do: bound pods become Running+Ready; terminating pods are finally removed. */
async function playAgent(client: ApiClient): Promise<void> {
  const pods = client.resource(PODS, 'default');
  for (const p of (await pods.list()).items) {
    if (!p.spec?.nodeName) continue;
    if (p.metadata.deletionTimestamp) {
      await pods.delete(p.metadata.name!, { gracePeriodSeconds: 0 }).catch(() => undefined);
    } else if (p.status?.phase !== 'Running' || !p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      const now = iso();
      await pods
        .patchStatus(p.metadata.name!, { status: { phase: 'Running', podIP: '10.244.0.10', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } }, { type: 'merge' })
        .catch(() => undefined);
    }
  }
}

const live = (pods: Pod[]): Pod[] => pods.filter((p) => !p.metadata.deletionTimestamp);

const KUBECTL = ['/usr/lib/google-cloud-sdk/bin/kubectl.1.32', '/usr/bin/kubectl'].find((p) => existsSync(p));

/** Runs the real kubectl against the test server (fresh discovery cache per run). */
function kubectl(kubeconfig: string, cacheDir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL!, [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cacheDir}`, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

test('scheduler + controllers on the real API server: deployment journey and node lease expiry', async (t) => {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-ctrl-it-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  cleanup(() => cp.close());
  const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanup(() => client.close());
  // The scheduler and controllers run as in `nodelet server`: each with its own least-privilege
  // identity (and protobuf lists and watches), so a controller that needs more than its upstream role fails this test.
  const as = (token: string): ApiClient => {
    const c = new ApiClient({ server: cp.url, token, ca: cp.caPem, protobuf: true });
    cleanup(() => c.close());
    return c;
  };
  const ids = cp.inProcessIdentities;
  const stop = new AbortController();
  const sched = await startScheduler({ client: as(ids.scheduler), logger: noopLogger, signal: stop.signal });
  // A short grace period so the lease expiry can be observed in seconds instead of 50.
  const cm = await startControllerManager({
    client: as(ids.controllerManager),
    clientFor: (account) => as(ids.controller(account)),
    logger: noopLogger, signal: stop.signal, nodeMonitorGracePeriodMs: 3_000, nodeMonitorPeriodMs: 500,
  });
  cleanup(async () => {
    stop.abort();
    await Promise.all([sched.close(), cm.close()]);
  });

  for (const n of ['node-a', 'node-b', 'node-c']) await client.resource(NODES).create(fakeNode(n));
  // The test's agents: renew each node's Lease (as the kubelet does every 10 s) until told to stop.
  const leases = client.resource(LEASES, 'kube-node-lease');
  const renew = async (name: string): Promise<void> => {
    const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') };
    try {
      const cur = await leases.get(name);
      await leases.update({ ...cur, spec });
    } catch {
      await leases.create({ metadata: { name, namespace: 'kube-node-lease' }, spec });
    }
  };
  const renewing = new Set(['node-a', 'node-b', 'node-c']);
  for (const n of renewing) await renew(n);
  let renewals = Promise.resolve();
  const renewer = setInterval(() => {
    renewals = renewals.then(() => Promise.all([...renewing].map((n) => renew(n))).then(() => undefined)).catch(() => undefined);
  }, 500);
  cleanup(async () => {
    clearInterval(renewer);
    await renewals;
  });
  await pollUntil('pod CIDRs assigned', async () => ((await client.resource(NODES).list()).items.every((n) => n.spec?.podCIDR) ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  const deploys = client.resource(DEPLOYMENTS, 'default');
  const pods = client.resource(PODS, 'default');

  // 1. A deployment of 3 becomes 3 bound pods, one per node (spreading).
  await deploys.create(deployment(3, 'busybox:1'));
  const bound = await pollUntil('3 pods bound', async () => {
    const l = live((await pods.list()).items);
    return l.length === 3 && l.every((p) => p.spec?.nodeName) ? l : undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  assert.deepEqual(new Set(bound.map((p) => p.spec?.nodeName)), new Set(['node-a', 'node-b', 'node-c']));
  await pollUntil('available 3', async () => {
    await playAgent(client);
    const d = await deploys.get('hello');
    return d.status?.availableReplicas === 3 && d.status.observedGeneration === d.metadata.generation ? d : undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  const cacheDir = join(dir, 'kube-cache');
  if (KUBECTL) {
    const rs = await kubectl(cp.kubeconfigPath, cacheDir, 'rollout', 'status', 'deployment/hello', '--timeout=30s');
    assert.equal(rs.code, 0, rs.out);
    assert.match(rs.out, /deployment "hello" successfully rolled out/);
  } else t.diagnostic('kubectl not installed: skipped the kubectl rollout checks');

  // 2. Scale 3 → 5 → 2 through the scale subresource, as `kubectl scale` does.
  for (const n of [5, 2]) {
    await client.patch(DEPLOYMENTS, 'hello', { spec: { replicas: n } }, { type: 'merge', namespace: 'default', subresource: 'scale' });
    await pollUntil(`${n} replicas`, async () => {
      await playAgent(client);
      const l = (await pods.list()).items;
      const d = await deploys.get('hello');
      return l.length === n && live(l).every((p) => p.spec?.nodeName) && d.status?.availableReplicas === n ? true : undefined;
    }, { timeoutMs: 8000, intervalMs: 25 });
  }

  // 3. Rolling update of 4 replicas (maxSurge 1, maxUnavailable 1): bounds hold at every observation.
  await client.patch(DEPLOYMENTS, 'hello', { spec: { replicas: 4 } }, { type: 'merge', namespace: 'default', subresource: 'scale' });
  await pollUntil('4 available', async () => {
    await playAgent(client);
    return (await deploys.get('hello')).status?.availableReplicas === 4 ? true : undefined;
  }, { timeoutMs: 8000, intervalMs: 25 });
  await deploys.patch('hello', { spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:2', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } } } }, { type: 'strategic' });
  let maxLive = 0;
  let minReady = Infinity;
  await pollUntil('rollout complete', async () => {
    const l = live((await pods.list()).items);
    maxLive = Math.max(maxLive, l.length);
    minReady = Math.min(minReady, l.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length);
    await playAgent(client);
    const d = await deploys.get('hello');
    const done = d.status?.updatedReplicas === 4 && d.status.replicas === 4 && d.status.availableReplicas === 4 && d.status.observedGeneration === d.metadata.generation;
    return done ? true : undefined;
  }, { timeoutMs: 20_000, intervalMs: 25 });
  assert.ok(maxLive <= 5, `saw ${maxLive} live pods, more than 4 + maxSurge 1`);
  assert.ok(minReady >= 3, `saw only ${minReady} ready pods, fewer than 4 - maxUnavailable 1`);
  const sets = (await client.resource(REPLICASETS, 'default').list()).items;
  assert.deepEqual(sets.map((s) => [s.metadata.annotations?.['deployment.kubernetes.io/revision'], s.spec?.replicas]).sort(), [['1', 0], ['2', 4]]);
  const progressing = (await deploys.get('hello')).status?.conditions?.find((c) => c.type === 'Progressing');
  assert.equal(progressing?.reason, 'NewReplicaSetAvailable');

  // kubectl rollout undo (client-side in 1.32): the revision-1 template comes back as revision 3.
  if (KUBECTL) {
    const undo = await kubectl(cp.kubeconfigPath, cacheDir, 'rollout', 'undo', 'deployment/hello');
    assert.equal(undo.code, 0, undo.out);
    await pollUntil('undo rolled out', async () => {
      await playAgent(client);
      const d = await deploys.get('hello');
      const done = d.status?.updatedReplicas === 4 && d.status.replicas === 4 && d.status.availableReplicas === 4 && d.status.observedGeneration === d.metadata.generation;
      return done ? d : undefined;
    }, { timeoutMs: 20_000, intervalMs: 25 }).catch(async (err) => {
      const d = await deploys.get('hello');
      t.diagnostic(JSON.stringify({ meta: d.metadata.annotations, gen: d.metadata.generation, status: d.status }));
      for (const r of (await client.resource(REPLICASETS, 'default').list()).items) t.diagnostic(`rs ${r.metadata.name} ${JSON.stringify([r.metadata.annotations, r.spec?.replicas, r.status])}`);
      for (const p of (await pods.list()).items) t.diagnostic(`pod ${p.metadata.name} ${p.spec?.nodeName} ${p.metadata.deletionTimestamp} ${p.status?.phase}`);
      throw err;
    });
    const d = await deploys.get('hello');
    assert.equal(d.spec?.template.spec?.containers[0]?.image, 'busybox:1');
    assert.equal(d.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
    const after = (await client.resource(REPLICASETS, 'default').list()).items;
    assert.deepEqual(after.map((s) => [s.metadata.annotations?.['deployment.kubernetes.io/revision'], s.spec?.replicas]).sort(), [['2', 0], ['3', 4]]);
    const status = await kubectl(cp.kubeconfigPath, cacheDir, 'rollout', 'status', 'deployment/hello', '--timeout=30s');
    assert.equal(status.code, 0, status.out);
    const history = await kubectl(cp.kubeconfigPath, cacheDir, 'rollout', 'history', 'deployment/hello');
    assert.equal(history.code, 0, history.out);
    assert.match(history.out, /^2\s/m);
    assert.match(history.out, /^3\s/m);
  }

  // 4. kubectl delete deployment (background): the garbage collector removes ReplicaSets and pods.
  await deploys.delete('hello', { propagationPolicy: 'Background' });
  await pollUntil('ReplicaSets and pods gone', async () => {
    await playAgent(client);
    const rs = (await client.resource(REPLICASETS, 'default').list()).items.length;
    const p = (await pods.list()).items.length;
    return rs === 0 && p === 0 ? true : undefined;
  }, { timeoutMs: 20_000, intervalMs: 25 });

  // 5. A node whose lease stops renewing goes Unknown with the unreachable taints; node-a,
  // still renewing, stays Ready.
  renewing.delete('node-b');
  renewing.delete('node-c');
  const gone = await pollUntil('node-b Unknown + tainted', async () => {
    const n = await client.resource(NODES).get('node-b');
    return n.spec?.taints?.length === 2 ? n : undefined;
  }, { timeoutMs: 15_000, intervalMs: 25 });
  const ready = gone.status?.conditions?.find((c) => c.type === 'Ready');
  assert.deepEqual([ready?.status, ready?.reason], ['Unknown', 'NodeStatusUnknown']);
  assert.deepEqual(gone.spec?.taints?.map((x) => `${x.key}:${x.effect}`).sort(), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
  const a = await client.resource(NODES).get('node-a');
  assert.equal(a.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(a.spec?.taints?.length ?? 0, 0);
});
