// The README walk, run exactly with the real kubectl against a cluster started by the quickstart
// code path (`nodelet lab up`, what `make up` runs) on private ports, state dir and bridge:
// create deployment → pods Running with IPs in the node's CIDR answering HTTP from the host →
// logs, exec → scale 1→5→2 → rolling update within maxSurge/maxUnavailable → delete, after which
// the garbage collector has removed ReplicaSets and pods and the node holds no sandbox,
// container, IP, veth or CNI cache entry; the lab's audit log says who deleted the Deployment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { auditLogFiles, labDown, labUp, labPaths, queryAuditLog } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { ApiClient, DEPLOYMENTS, loadKubeconfig, type Deployment } from '@nodelet/api';
import { connectCriClient } from '@nodelet/cri-client';
import { httpStatus, inCidr, kubectl } from './helpers.js';
import { cleanups, freePort } from '@nodelet/base/testing';
import { isAbortError, pollUntil } from '@nodelet/base';

const BRIDGE = 'nle0';

interface PodRow {
  name: string;
  phase: string;
  ip: string;
  node: string;
  deleting: boolean;
}

test('README journey: kubectl create deployment → running pods on the pod network → scale → rollout → delete leaves nothing', async (t) => {
  if (!requireRoot(t)) return;
  const cleanup = cleanups(t);
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-journey-'));
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.236.0.0/16', bridge: BRIDGE, nodeName: 'e2e-node', nodeApiPort: nodePort, healthzPort };
  cleanup(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });
  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);
  const admin = new ApiClient(await loadKubeconfig(up.kubeconfig));
  cleanup(() => admin.close());

  const podCIDR = (await k('get', 'node', 'e2e-node', '-o', 'jsonpath={.spec.podCIDR}')).trim();
  assert.ok(inCidr(podCIDR.split('/')[0]!, '10.236.0.0/16'), `podCIDR ${podCIDR} is not from the cluster CIDR`);

  const pods = async (): Promise<PodRow[]> => {
    const list = JSON.parse(await k('get', 'pods', '-l', 'app=hello', '-o', 'json')) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string; podIP?: string }; spec: { nodeName?: string } }> };
    return list.items.map((p) => ({ name: p.metadata.name, phase: p.status.phase ?? '', ip: p.status.podIP ?? '', node: p.spec.nodeName ?? '', deleting: !!p.metadata.deletionTimestamp }));
  };
  // Pods being deleted are left out: busybox httpd as PID 1 ignores SIGTERM, so each one ends only
  // at its 30 s grace period, as it would anywhere; the end of the journey waits for every one.
  const settled = (n: number) =>
    pollUntil(`${n} running hello pods`, async () => {
      const ps = (await pods()).filter((p) => !p.deleting);
      return ps.length === n && ps.every((p) => p.phase === 'Running' && p.ip) ? ps : undefined;
    }, { timeoutMs: 120_000, intervalMs: 250 });
  const checkPods = async (ps: PodRow[]) => {
    assert.equal(new Set(ps.map((p) => p.ip)).size, ps.length, 'pod IPs must be distinct');
    for (const p of ps) {
      assert.equal(p.node, 'e2e-node');
      assert.ok(inCidr(p.ip, podCIDR), `pod IP ${p.ip} is outside the node's CIDR ${podCIDR}`);
      // busybox httpd serving an empty document root answers 404: an HTTP answer over the pod network.
      assert.equal(await pollUntil(`HTTP from ${p.ip}:8080`, () => httpStatus(p.ip, 8080), { timeoutMs: 20_000, intervalMs: 250 }), 404);
    }
  };

  // 1. The first command of the journey (kubectl 1.32 sends it as protobuf).
  await k('create', 'deployment', 'hello', `--image=${up.images.busybox}`, '--', 'httpd', '-f', '-p', '8080');
  await checkPods(await settled(1));
  const wide = await k('get', 'pods', '-o', 'wide');
  assert.match(wide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE/m);
  assert.match(wide, /hello-[a-z0-9]+-[a-z0-9]{5}\s+1\/1\s+Running\s+0\s+\S+\s+10\.236\.\d+\.\d+\s+e2e-node/);

  // 2. logs and exec go API server → node API → CRI.
  const logs = await k.try('logs', 'deploy/hello');
  assert.equal(logs.code, 0, logs.stderr);
  const [first] = await pods();
  assert.equal((await k('exec', first!.name, '--', 'hostname')).trim(), first!.name);
  assert.equal((await k('exec', first!.name, '--', 'sh', '-c', 'echo out; echo err >&2; exit 3').catch((e: Error) => e.message)).includes('exit code 3'), true);

  // 3. Scale 1 → 5 → 2.
  await k('scale', 'deployment', 'hello', '--replicas=5');
  assert.match(await k('rollout', 'status', 'deployment/hello', '--timeout=120s'), /successfully rolled out/);
  await checkPods(await settled(5));
  await k('scale', 'deployment', 'hello', '--replicas=2');
  await checkPods(await settled(2));

  // 4. A rolling update never exceeds maxSurge (25 % of 2 → 1) nor drops below replicas − maxUnavailable (0).
  const watchStop = new AbortController();
  let maxReplicas = 0;
  let minAvailable = Infinity;
  const observing = (async () => {
    try {
      for await (const ev of admin.watch(DEPLOYMENTS, { namespace: 'default', fieldSelector: 'metadata.name=hello', signal: watchStop.signal })) {
        const d = ev.object as Deployment;
        maxReplicas = Math.max(maxReplicas, d.status?.replicas ?? 0);
        minAvailable = Math.min(minAvailable, d.status?.availableReplicas ?? 0);
      }
    } catch (err) {
      // watchStop.abort() ends the watch; what it saw is asserted below. Anything else is a failure.
      if (!isAbortError(err)) throw err;
    }
  })();
  const before = new Set((await pods()).map((p) => p.name));
  await k('set', 'env', 'deployment/hello', 'GREETING=v2');
  assert.match(await k('rollout', 'status', 'deployment/hello', '--timeout=180s'), /successfully rolled out/);
  const after = await settled(2);
  watchStop.abort();
  await observing;
  assert.ok(after.every((p) => !before.has(p.name)), 'every pod was replaced');
  assert.ok(maxReplicas <= 3, `rollout ran ${maxReplicas} pods, more than replicas + maxSurge = 3`);
  assert.ok(minAvailable >= 2, `rollout dropped to ${minAvailable} available, below replicas − maxUnavailable = 2`);
  await checkPods(after);
  assert.equal((await k('get', 'rs', '-l', 'app=hello', '--no-headers')).trim().split('\n').length, 2);

  // 5. Delete: the GC removes the ReplicaSets and pods; the node releases everything.
  await k('delete', 'deployment', 'hello');
  await pollUntil('ReplicaSets and pods of hello to be garbage-collected', async () => {
    const left = (await k('get', 'rs,pods', '-l', 'app=hello', '--no-headers', '--ignore-not-found')).trim();
    return left === '' ? true : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const p = labPaths(stateDir);
  const { client: cri } = await connectCriClient({ endpoint: up.runtimeEndpoint });
  cleanup(() => cri.close());
  await pollUntil('the node to remove every sandbox and container', async () => {
    const sb = (await cri.runtime.listPodSandbox({})).items ?? [];
    const cs = (await cri.runtime.listContainers({})).containers ?? [];
    return sb.length === 0 && cs.length === 0 ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  const ipFiles = existsSync(p.ipam) ? readdirSync(p.ipam, { recursive: true }).map(String).filter((f) => /\d+\.\d+\.\d+\.\d+$/.test(f)) : [];
  assert.deepEqual(ipFiles, [], 'host-local still holds IPs');
  const cache = join(p.cniCache, 'results');
  assert.deepEqual(existsSync(cache) ? readdirSync(cache) : [], [], 'CNI cache entries left');
  const veths = JSON.parse(execFileSync('ip', ['-j', 'link', 'show', 'master', BRIDGE], { encoding: 'utf8' }) || '[]') as unknown[];
  assert.deepEqual(veths, [], `veths left on ${BRIDGE}`);

  // 6. Who deleted it (`nodelet audit --verb delete --resource deployments.apps`): the lab's audit log.
  const { events } = await queryAuditLog(auditLogFiles(p.auditLog), { verb: 'delete', resource: 'deployments.apps', name: 'hello' });
  assert.deepEqual(events.map((e) => [e.user?.username, e.objectRef?.namespace, e.responseStatus?.code]), [['kubernetes-admin', 'default', 200]]);
});
