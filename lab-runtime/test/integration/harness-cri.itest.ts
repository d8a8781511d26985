// The harness through CRI, as the agent and cri-client tests use it: PullImage via the registry,
// a pod sandbox on the default bridge, a running container; then stop() WITHOUT removing them
// (a test that failed midway) must still leave no netns, bridge, mount, cgroup or CNI cache behind.
// (Test-only use of @nodelet/cri-client: lab-runtime itself never speaks gRPC.)
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { createCriClient } from '@nodelet/cri-client';
import { findProcesses, mountsUnder } from '@nodelet/lab-runtime';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';

const BRIDGE = { name: 'nlb-hcri', subnet: '10.232.7.0/24' };

test('stop() after a pod was left running removes its netns, bridge, mounts, cgroups and CNI cache', { timeout: 90_000 }, async (t) => {
  if (!requireRoot(t)) return;
  const rt = await startTestRuntime({ name: 'harness-cri', bridge: BRIDGE });
  t.after(() => rt.stop());
  const cri = createCriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  t.after(() => cri.close());

  const pulled = await cri.image.pullImage({ image: { image: rt.images.busybox } });
  assert.match(pulled.imageRef, /^sha256:[a-f0-9]{64}$/);
  const config = { metadata: { name: 'left-running', namespace: 'default', uid: `harness-${process.pid}`, attempt: 0 }, logDirectory: `${rt.dir}/pod-logs`, linux: {} };
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config });
  const { status } = await cri.runtime.podSandboxStatus({ podSandboxId });
  assert.match(status?.network?.ip ?? '', /^10\.232\.7\.\d+$/, 'pod IP from the bridge subnet');
  const { containerId } = await cri.runtime.createContainer({
    podSandboxId,
    config: { metadata: { name: 'sleeper', attempt: 0 }, image: { image: rt.images.busybox }, command: ['sleep', '300'], logPath: 'sleeper.log' },
    sandboxConfig: config,
  });
  await cri.runtime.startContainer({ containerId });

  assert.ok(existsSync(`/sys/class/net/${BRIDGE.name}`), 'the bridge exists while the pod runs');
  assert.ok((await mountsUnder(rt.dir)).some((m) => m.includes('/netns/')), 'the pod netns is mounted under the runtime dir');
  const cniCache = () => (existsSync('/var/lib/cni/results') ? readdirSync('/var/lib/cni/results').filter((n) => n.includes(podSandboxId)) : []);
  assert.ok(cniCache().length > 0, 'libcni cached the ADD result');
  const cgroups = () => [podSandboxId, containerId].filter((id) => existsSync(`/sys/fs/cgroup/memory/k8s.io/${id}`) || existsSync(`/sys/fs/cgroup/unified/k8s.io/${id}`));
  assert.equal(cgroups().length, 2, 'sandbox and container cgroups exist (cgroupfs, no parent: /k8s.io/<id>)');

  cri.close();
  await rt.stop();

  assert.equal(existsSync(`/sys/class/net/${BRIDGE.name}`), false, 'bridge deleted (and with it the host-side veth)');
  assert.deepEqual(await mountsUnder(rt.dir), [], 'netns, shm and rootfs mounts gone');
  assert.equal(existsSync(rt.dir), false);
  assert.deepEqual(cniCache(), [], 'libcni result cache of the sandbox removed');
  assert.deepEqual(cgroups(), [], 'container cgroups removed');
  assert.deepEqual(await findProcesses((argv) => argv.some((a) => a.includes(rt.dir))), [], 'no pause, container, shim or containerd left');
});
