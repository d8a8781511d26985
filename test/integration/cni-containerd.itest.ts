// End to end: containerd 1.6 configured with nodelet's runtime conflist calls nodelet-cni, which
// forwards to the CNI service, which runs the real bridge/host-local/portmap chain. RunPodSandbox
// gets the engine's address, a hostPort reaches a web server in the pod from 127.0.0.1;
// StopPodSandbox and RemovePodSandbox (two DELs, the second without a
// netns) leave nothing behind. Bridge nlc3, subnet 10.233.3.0/24.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { installNodeletCni, startCniService, type CniResult } from '@nodelet/cni';
import { createCriClient, netnsPathFromSandboxInfo } from '@nodelet/cri-client';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';
import { bridgePorts, delLink, natCniLines, restoreNat, skipReason } from '../../cni/test/integration/host.js';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nlc3';

function httpGet(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host, () => s.write('GET / HTTP/1.0\r\n\r\n'));
    let data = '';
    s.on('data', (d) => (data += d));
    s.on('end', () => resolve(data));
    s.on('error', reject);
    s.setTimeout(2000, () => s.destroy(new Error('timed out')));
  });
}
const CHAIN = 'nlc-e2e-pods';

test('containerd → nodelet-cni → CNI service → real plugins, and back', { timeout: 120_000 }, async (t) => {
  const why = skipReason();
  if (why) return t.skip(why);
  if (!requireRoot(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'nlc-e2e-'));
  const binDir = join(dir, 'bin');
  const confDir = join(dir, 'net.d');
  const ipam = join(dir, 'ipam');
  await delLink(BRIDGE); // stale bridge of a killed earlier run (the name is ours alone)
  const natBefore = await natCniLines();
  const cleanups: Array<() => Promise<unknown>> = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => process.stderr.write(`# cleanup: ${String(e)}\n`));
    await delLink(BRIDGE);
    await restoreNat(natBefore, [CHAIN]);
    await rm(dir, { recursive: true, force: true });
  });

  // 1. The node side: service on a socket, nodelet-cni + loopback in the runtime's bin dir,
  //    the one-plugin conflist in its conf dir.
  const serviceOptions = {
    socketPath: join(dir, 'cni.sock'),
    binDirs: ['/usr/lib/cni'],
    cacheDir: join(dir, 'cache'),
    chain: { name: CHAIN, podCIDR: '10.233.3.0/24', bridgeName: BRIDGE, ipamDataDir: ipam },
    runtimeConfDir: confDir,
  };
  let svc = await startCniService(serviceOptions);
  cleanups.push(() => svc.close());
  const installed = await installNodeletCni(binDir, { pluginDirs: ['/usr/lib/cni'] }); // the C build when `make native` ran
  assert.ok(installed.loopback, 'loopback installed beside nodelet-cni');

  // 2. A private containerd using those dirs, and a CRI client.
  const rt = await startTestRuntime({ name: 'cni-e2e', cni: { binDir, confDir } });
  cleanups.push(() => rt.stop());
  const cri = createCriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  cleanups.push(async () => cri.close());
  await pollUntil('containerd to report NetworkReady', async () => {
    const st = await cri.runtime.status({});
    return st.status?.conditions?.some((c) => c.type === 'NetworkReady' && c.status) ?? false;
  }, { timeoutMs: 20_000, intervalMs: 25 });

  // 3. RunPodSandbox: containerd runs loopback itself and nodelet-cni for eth0.
  const uid = `e2e-uid-${process.pid}`;
  const config = {
    metadata: { name: 'web', namespace: 'e2e', uid, attempt: 0 },
    hostname: 'web',
    labels: { 'nodelet.test/suite': 'cni-e2e' },
    logDirectory: join(dir, 'logs'),
    portMappings: [{ protocol: 'TCP' as const, containerPort: 80, hostPort: 18083 }],
  };
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
  cleanups.push(() => cri.runtime.removePodSandbox({ podSandboxId }));
  const status = await cri.runtime.podSandboxStatus({ podSandboxId, verbose: true });
  const netns = netnsPathFromSandboxInfo(status);
  assert.ok(netns && existsSync(netns), 'sandbox netns exists');

  const [att, ...more] = await svc.engine.cachedAttachments(CHAIN);
  assert.equal(more.length, 0);
  assert.equal(att!.containerID, podSandboxId);
  assert.equal(att!.ifName, 'eth0');
  assert.equal(att!.netns, netns);
  const result = att!.result as unknown as CniResult;
  const ip = result.ips![0]!.address.split('/')[0]!;
  assert.match(ip, /^10\.233\.3\.\d+$/);
  assert.equal(status.status?.network?.ip, ip, 'the pod IP is the one the engine assigned');
  assert.ok(existsSync(join(ipam, CHAIN, ip)), 'host-local reserved it');
  const args = Object.fromEntries(att!.cniArgs ?? []);
  assert.equal(args.K8S_POD_NAME, 'web');
  assert.equal(args.K8S_POD_NAMESPACE, 'e2e');
  assert.equal(args.K8S_POD_UID, uid);
  assert.equal(args.K8S_POD_INFRA_CONTAINER_ID, podSandboxId);
  assert.deepEqual(att!.capabilityArgs?.portMappings, [{ hostPort: 18083, containerPort: 80, protocol: 'tcp' }], 'runtimeConfig reached the chain');
  assert.equal((await bridgePorts(BRIDGE)).length, 1);
  // The agent's periodic CHECK and GC (with the sandbox still valid) leave it alone.
  await svc.check({ containerID: podSandboxId, ifName: 'eth0', netns });
  assert.deepEqual(await svc.gc([{ containerID: podSandboxId, ifName: 'eth0' }]), { deleted: [], errors: [] });
  assert.equal((await svc.engine.cachedAttachments(CHAIN)).length, 1);

  // 4. The hostPort works end to end: a web server in the pod, reached from the host via loopback.
  await cri.image.pullImage({ image: { image: rt.images.busybox } });
  const { containerId } = await cri.runtime.createContainer({
    podSandboxId,
    sandboxConfig: config,
    config: { metadata: { name: 'httpd', attempt: 0 }, image: { image: rt.images.busybox }, command: ['/bin/sh', '-c', 'mkdir -p /www && echo hello-from-pod > /www/index.html && exec httpd -f -p 80 -h /www'], logPath: 'httpd.log' },
  });
  await cri.runtime.startContainer({ containerId });
  let body = '';
  await pollUntil('the pod web server through hostPort 18083', async () => {
    body = await httpGet('127.0.0.1', 18083).catch(() => '');
    return body.includes('hello-from-pod');
  }, { timeoutMs: 15_000, intervalMs: 25 });
  await cri.runtime.stopContainer({ containerId, timeout: 0 });
  await cri.runtime.removeContainer({ containerId });

  // 5. StopPodSandbox: DEL through the shim; the attachment is gone.
  await cri.runtime.stopPodSandbox({ podSandboxId });
  assert.deepEqual(await svc.engine.cachedAttachments(CHAIN), [], 'no cache entry');
  assert.equal(existsSync(join(ipam, CHAIN, ip)), false, 'no IP file');
  assert.deepEqual(await bridgePorts(BRIDGE), [], 'no veth');
  assert.equal(existsSync(netns), false, 'no netns');
  assert.ok(![...(await natCniLines())].some((l) => l.includes(podSandboxId.slice(0, 12)) || l.includes(`\\"${CHAIN}\\"`)), 'no portmap rules');

  // 6. RemovePodSandbox: containerd's second DEL (empty CNI_NETNS) must succeed.
  await cri.runtime.removePodSandbox({ podSandboxId });
  assert.equal((await cri.runtime.listPodSandbox({ filter: { id: podSandboxId } })).items.length, 0);
  assert.deepEqual((await readdir(join(ipam, CHAIN))).filter((f) => /^\d/.test(f)), []);

  // 7. Agent down: RunPodSandbox fails with nodelet-cni's "try again later". containerd 1.6 keeps
  //    the sandbox NOTREADY because its teardown DEL failed too; once the service is back, the
  //    kubelet-style cleanup (stop + remove, DEL without a prior ADD) succeeds and the pod starts.
  await svc.close();
  await assert.rejects(cri.runtime.runPodSandbox({ config: { ...config, metadata: { ...config.metadata, attempt: 1 } } }), (err: Error) => {
    assert.match(err.message, /try again later/);
    assert.match(err.message, /nodelet CNI service at .*cni\.sock is unreachable/);
    return true;
  });
  const failed = (await cri.runtime.listPodSandbox({})).items.filter((p) => p.metadata?.uid === uid);
  assert.deepEqual(failed.map((p) => p.state), ['SANDBOX_NOTREADY']);
  svc = await startCniService(serviceOptions);
  await cri.runtime.stopPodSandbox({ podSandboxId: failed[0]!.id });
  await cri.runtime.removePodSandbox({ podSandboxId: failed[0]!.id });
  const again = await cri.runtime.runPodSandbox({ config: { ...config, metadata: { ...config.metadata, attempt: 2 } } });
  await cri.runtime.stopPodSandbox({ podSandboxId: again.podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId: again.podSandboxId });
  assert.deepEqual(await svc.engine.cachedAttachments(CHAIN), []);
  assert.deepEqual(await bridgePorts(BRIDGE), []);
});
