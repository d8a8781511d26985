// The shared harness: a private containerd answers CRI, pulls the lab images from the in-process
// registry, runs a pod sandbox through CNI, and stop() leaves no process, mount or directory behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { findProcesses, mountsUnder, probeCri, run } from '@nodelet/lab-runtime';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';

const BRIDGE = { name: 'nlb-harness', subnet: '10.232.0.0/24' };

async function ctr(rt: { endpoint: string }, ...args: string[]): Promise<string> {
  const r = await run('ctr', ['--address', rt.endpoint.replace('unix://', ''), '--namespace', 'k8s.io', ...args]);
  assert.equal(r.code, 0, `ctr ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

test('startTestRuntime: containerd answers CRI, pulls from the lab registry, stop() leaves nothing', { timeout: 90_000 }, async (t) => {
  if (!requireRoot(t)) return;
  const rt = await startTestRuntime({ name: 'harness', bridge: BRIDGE });
  t.after(() => rt.stop());

  // 1. CRI answers Version on the endpoint it reports.
  const v = await probeCri(rt.endpoint.slice('unix://'.length));
  assert.equal(v.runtimeName, 'containerd');
  assert.equal(v.runtimeApiVersion, 'v1');
  assert.match(rt.images.busybox, /^127\.0\.0\.1:\d+\/busybox:latest$/);
  assert.match(rt.images.pause, /^127\.0\.0\.1:\d+\/pause:3\.9$/);

  // 2. The registry serves the manifests with the headers containerd relies on.
  const head = await fetch(`http://${rt.registryHost}/v2/busybox/manifests/latest`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('docker-content-digest') ?? '', /^sha256:[a-f0-9]{64}$/);
  assert.equal(head.headers.get('content-type'), 'application/vnd.oci.image.manifest.v1+json');

  // 3. containerd pulls both images through it and unpacks them (overlayfs snapshots).
  await ctr(rt, 'images', 'pull', '--plain-http', rt.images.pause);
  await ctr(rt, 'images', 'pull', '--plain-http', rt.images.busybox);
  const list = await ctr(rt, 'images', 'ls', '-q');
  assert.ok(list.includes(rt.images.busybox) && list.includes(rt.images.pause), list);

  // 4. A container runs from the pulled image, leaving a shim, a process and mounts that stop() must clean up.
  const socket = rt.endpoint.slice('unix://'.length);
  // --fifo-dir: ctr's default (/run/containerd/fifo) is host-wide; keep the IO fifos in our dir.
  await ctr(rt, 'run', '-d', '--fifo-dir', `${rt.dir}/fifo`, rt.images.busybox, 'harness-probe', 'sleep', '300');
  const task = (await ctr(rt, 'tasks', 'ls')).split('\n').find((l) => l.startsWith('harness-probe'));
  const containerPid = Number(task?.split(/\s+/)[1]);
  assert.ok(containerPid > 0 && existsSync(`/proc/${containerPid}`), `container process runs: ${task}`);
  const shims = await findProcesses((argv) => /containerd-shim/.test(argv[0] ?? '') && argv.includes(socket));
  assert.equal(shims.length, 1, 'one shim for the running container');
  assert.ok((await mountsUnder(rt.dir)).length > 0, 'the container rootfs is mounted under the runtime dir');

  await rt.stop();
  await rt.stop(); // idempotent

  assert.equal(existsSync(`/proc/${rt.pid}`), false, 'containerd is gone');
  assert.equal(existsSync(`/proc/${containerPid}`), false, 'the container process is gone');
  assert.deepEqual(await findProcesses((argv) => argv.some((a) => a.startsWith(rt.dir))), [], 'no process refers to the runtime dir');
  assert.deepEqual(await mountsUnder(rt.dir), []);
  assert.equal(existsSync(rt.dir), false, 'temp dir removed');
  assert.equal(existsSync('/run/containerd/runc/k8s.io/harness-probe'), false, 'no runc state left in the shared default root');
  const closed = await fetch(`http://${rt.registryHost}/v2/`).then(() => 'open', () => 'closed');
  assert.equal(closed, 'closed', 'registry stopped');
});
