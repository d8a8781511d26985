import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode, isAbortError } from '@nodelet/base';
import { FakeCri } from './fake-cri.js';
import { PodIpam } from './pod-ipam.js';

const sandboxConfig = (name: string, hostNetwork = false) => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: 0 },
  labels: { 'nodelet.io/managed': 'true', 'io.kubernetes.pod.uid': `uid-${name}` },
  ...(hostNetwork ? { linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } } : {}),
});

test('pod IPAM gives addresses from the CIDR, never network/gateway/broadcast, and reuses released ones', () => {
  const ipam = new PodIpam();
  assert.ok(hasCode(catchErr(() => ipam.allocate()), 'ERR_NETWORK_NOT_READY'));
  ipam.setCidr('10.244.3.0/29'); // .2 … .6 usable
  const got = [1, 2, 3, 4, 5].map(() => ipam.allocate());
  assert.deepEqual(got, ['10.244.3.2', '10.244.3.3', '10.244.3.4', '10.244.3.5', '10.244.3.6']);
  assert.ok(hasCode(catchErr(() => ipam.allocate()), 'ERR_RESOURCE_EXHAUSTED'));
  ipam.release('10.244.3.4');
  assert.equal(ipam.allocate(), '10.244.3.4');
  assert.ok(hasCode(catchErr(() => ipam.setCidr('10.0.0.0/31')), 'ERR_INVALID_ARGUMENT'));
});

test('the fake CRI answers after its delays, reports NetworkReady from the pod CIDR, and honours signals', async () => {
  const cri = new FakeCri({ delays: { runPodSandbox: 40, createContainer: 0, startContainer: 0 } });
  const cond = async () => (await cri.runtime.status({})).status?.conditions.find((x) => x.type === 'NetworkReady')?.status;
  assert.equal(await cond(), false);
  await assert.rejects(cri.runtime.runPodSandbox({ config: sandboxConfig('a') }), (e) => hasCode(e, 'ERR_NETWORK_NOT_READY'));
  cri.ipam.setCidr('10.244.0.0/24');
  assert.equal(await cond(), true);

  const t0 = performance.now();
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: sandboxConfig('a') });
  assert.ok(performance.now() - t0 >= 35, 'RunPodSandbox takes its delay');
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: { metadata: { name: 'app' }, image: { image: 'nginx:1.27' } } });
  await cri.runtime.startContainer({ containerId });
  const listed = await cri.runtime.listContainers({ filter: { podSandboxId } });
  assert.equal(listed.containers[0]?.state, 'CONTAINER_RUNNING');
  assert.match(listed.containers[0]!.imageRef, /^sha256:[0-9a-f]{64}$/);
  assert.ok((await cri.image.imageStatus({ image: { image: 'nginx:1.27' } })).image, 'every image is present');

  const ac = new AbortController();
  const pending = cri.runtime.runPodSandbox({ config: sandboxConfig('b') }, { signal: ac.signal });
  ac.abort();
  await assert.rejects(pending, (e) => isAbortError(e));
  assert.equal(cri.state.sandboxes.size, 1, 'an aborted RunPodSandbox creates nothing');

  await assert.rejects(cri.runtime.exec({}), (e) => hasCode(e, 'ERR_UNIMPLEMENTED'));
  cri.close();
  await assert.rejects(cri.runtime.listPodSandbox({}), (e) => hasCode(e, 'ERR_UNAVAILABLE'));
});

test('hollow pods exit 0 on stop, host-network pods take no address, and a stopped sandbox gives its address back', async () => {
  const cri = new FakeCri({ delays: { runPodSandbox: 0, createContainer: 0, startContainer: 0, stopContainer: 0, stopPodSandbox: 0 } });
  cri.ipam.setCidr('10.244.1.0/24');
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: sandboxConfig('a') });
  const host = await cri.runtime.runPodSandbox({ config: sandboxConfig('h', true) });
  assert.equal((await cri.runtime.podSandboxStatus({ podSandboxId: host.podSandboxId })).status?.network?.ip, '');
  assert.equal(cri.ipam.inUse, 1);
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: { metadata: { name: 'app' }, image: { image: 'busybox' } } });
  await cri.runtime.startContainer({ containerId });
  await cri.runtime.stopContainer({ containerId });
  const st = (await cri.runtime.containerStatus({ containerId })).status;
  assert.deepEqual([st?.state, st?.exitCode, st?.reason], ['CONTAINER_EXITED', 0, 'Completed']);
  await cri.runtime.stopPodSandbox({ podSandboxId });
  assert.equal(cri.ipam.inUse, 0);
  await assert.rejects(cri.runtime.stopContainer({ containerId: 'f'.repeat(64) }), (e) => hasCode(e, 'ERR_NOT_FOUND'));
});

function catchErr(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
}

test('the hollow host wires the pod network to its runtime: NetworkReady and sandbox IPs follow the pod CIDR the agent sets', async () => {
  const { hollowHost } = await import('./hollow-host.js');
  const host = hollowHost({ delays: { runPodSandbox: 0 } });
  assert.equal(host.profile, 'hollow');
  assert.equal(host.hostParts, false);
  const { client, version } = await host.connectRuntime({} as never, 0);
  assert.equal(version.runtimeName, 'hollow');
  const net = await host.startPodNetwork({} as never, undefined as never);
  assert.equal(net.ready(), false);
  net.setPodCIDR('10.244.7.0/24');
  assert.equal(net.ready(), true);
  const { podSandboxId } = await client.runtime.runPodSandbox({ config: sandboxConfig('a') });
  assert.equal((await client.runtime.podSandboxStatus({ podSandboxId })).status?.network?.ip, '10.244.7.2');
  assert.equal(await host.mounter.isTmpfsMountPoint('/nonexistent'), true, 'volume code writes without mounting');
  await net.close();
  client.close();
});
