import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LEASES, NODES, PODS, type Lease } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod } from './harness.js';
import { pollUntil } from '@nodelet/base';
import { startTestProcess } from '@nodelet/base/testing';

test('the node registers with capacity, nodeInfo and a Lease; a pulled image is in status.images; a containerd restart makes it NotReady (the runtime’s message, within a status period) and Ready again within 10 s, pods untouched', { timeout: 120_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('node', { nodeStatusUpdateFrequency: '1s' }, 4);
  t.after(() => h.stop());

  const node = await pollUntil('node Ready', async () => {
    const n = await h.api.get(NODES, h.nodeName);
    return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
  }, { timeoutMs: 20_000 });
  const st = node.status!;
  assert.equal(st.capacity!.pods, '110');
  assert.ok(Number(st.capacity!.cpu) >= 1);
  assert.match(st.capacity!.memory!, /^\d+(Ki|Mi|Gi)?$/);
  assert.ok(st.allocatable!['ephemeral-storage']);
  assert.equal(st.nodeInfo!.containerRuntimeVersion.split('://')[0], 'containerd');
  assert.equal(st.nodeInfo!.bootID, readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  assert.equal(st.nodeInfo!.operatingSystem, 'linux');
  assert.deepEqual(st.addresses!.find((a) => a.type === 'InternalIP'), { type: 'InternalIP', address: '127.0.0.1' });
  assert.equal(st.daemonEndpoints!.kubeletEndpoint!.Port, h.agent.nodeApiPort);
  for (const c of ['MemoryPressure', 'DiskPressure', 'PIDPressure']) assert.ok(st.conditions!.some((x) => x.type === c), c);
  // The agent never writes its own podCIDR (the IPAM controller's job; NodeRestriction refuses it
  // from a node): --pod-cidr is used locally while the Node has none.
  assert.equal(node.spec?.podCIDR, undefined);
  assert.equal(node.metadata.labels!['kubernetes.io/hostname'], h.nodeName);

  // The Lease loop runs beside the status loop: a node Ready at its first 1 s update may not have its Lease yet.
  const lease = await pollUntil('the node Lease', () => h.api.get<Lease>(LEASES, h.nodeName, { namespace: 'kube-node-lease' }), { timeoutMs: 10_000, intervalMs: 100 });
  assert.equal(lease.spec!.holderIdentity, h.nodeName);
  assert.equal(lease.spec!.leaseDurationSeconds, 40);
  assert.ok(lease.spec!.renewTime);

  // healthz on its own port, unauthenticated
  const hz = await fetch(`http://127.0.0.1:${h.agent.healthzPort}/healthz`);
  assert.equal(await hz.text(), 'ok');

  // a running pod, then a containerd restart (same root, state and socket; the shims keep containers alive)
  await h.api.create(PODS, podSpec(h, 'survivor', { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 0.2; done"] }] }));
  const before = await pollUntil('survivor Running', async () => {
    const p = await getPod(h, 'survivor');
    return p.status?.phase === 'Running' ? p : undefined;
  }, { timeoutMs: 30_000 });
  // The pulled image is in status.images (kubelet's Images setter), by the name the pod asked for,
  // with containerd's size: read again after the pull, so well before the 30 s image list period.
  const pulled = await pollUntil('busybox in the Node\'s status.images', async () => {
    const n = await h.api.get(NODES, h.nodeName);
    return n.status?.images?.find((i) => i.names?.includes(h.rt.images.busybox));
  }, { timeoutMs: 10_000, intervalMs: 200 });
  assert.ok(pulled.sizeBytes! > 0, `busybox reported with size ${pulled.sizeBytes}`);
  assert.ok(pulled.names!.some((x) => x.includes('@sha256:')), 'the repo digest comes with the tag');
  const cmdline = readFileSync(`/proc/${h.rt.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const killedAt = Date.now();
  process.kill(h.rt.pid, 'SIGKILL');
  const notReady = await pollUntil('node NotReady while the runtime is down', async () => {
    const n = await h.api.get(NODES, h.nodeName);
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    return ready?.status === 'False' ? ready : undefined;
  }, { timeoutMs: 20_000, intervalMs: 200 });
  const wentDown = (Date.now() - killedAt) / 1000;
  // One node status period (1 s here), plus the runtime check's own deadline (5 s) for a runtime that hangs rather than refuses.
  assert.ok(wentDown <= 1 + 5 + 1, `NotReady ${wentDown.toFixed(1)} s after the runtime died`);
  assert.equal(notReady.reason, 'KubeletNotReady');
  assert.match(notReady.message!, /^container runtime is down: \S/, 'the runtime\'s own error, after kubelet\'s prefix');
  // Pods are untouched while the runtime is away: status as it was.
  const during = await getPod(h, 'survivor');
  assert.equal(during.status!.containerStatuses![0]!.containerID, before.status!.containerStatuses![0]!.containerID);
  assert.equal(during.status!.phase, 'Running');
  t.diagnostic(`NotReady ${wentDown.toFixed(1)} s after containerd was killed: ${notReady.message}`);
  // containerd again with the same command line (config, sockets, state): a kit process, ready when CRI answers.
  const t0 = Date.now();
  const restarted = await startTestProcess({ name: 'containerd', command: cmdline[0]!, args: cmdline.slice(1), ready: () => h.cri.runtime.version({}), readyTimeoutMs: 30_000 });
  h.beforeRuntimeStop.push(() => restarted.stop());
  await pollUntil('node Ready again', async () => {
    const n = await h.api.get(NODES, h.nodeName);
    return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  }, { timeoutMs: 30_000, intervalMs: 200 });
  const took = (Date.now() - t0) / 1000;
  assert.ok(took <= 10, `Ready again after ${took.toFixed(1)} s`);
  const after = await getPod(h, 'survivor');
  assert.equal(after.status!.containerStatuses![0]!.containerID, before.status!.containerStatuses![0]!.containerID);
  assert.equal(after.status!.containerStatuses![0]!.restartCount, 0);
  t.diagnostic(`node Ready ${took.toFixed(1)} s after containerd came back`);
});
