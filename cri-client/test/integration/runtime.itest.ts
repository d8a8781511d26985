// cri-client against a real containerd 1.6 (lab harness): handshake and status, image service
// against the local registry, failures that must leave nothing behind, UNIMPLEMENTED RPCs,
// unreachable runtime, and reconnect after a containerd restart.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { errCode, hasCode } from '@nodelet/base';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { containerdPaths, startContainerd, stopContainerd } from '@nodelet/lab-runtime';
import { createCriClient, handshake } from '@nodelet/cri-client';
import { podConfig, startEnv, type Env } from './helpers.js';

let env: Env | undefined;
let skip = '';

before(async (t) => {
  if (!requireRoot({ skip: (m) => (skip = m ?? 'skipped') })) return;
  env = await startEnv(t as never, 'cri-runtime', 'nla1', '10.231.1.0/24');
});

function need(t: { skip(m: string): void }): Env | undefined {
  if (!env) t.skip(skip || 'runtime not started');
  return env;
}

test('Version handshake and Status conditions', async (t) => {
  const e = need(t);
  if (!e) return;
  const v = await handshake(e.cri);
  assert.deepEqual([v.version, v.runtimeName, v.runtimeApiVersion], ['0.1.0', 'containerd', 'v1']);
  const st = await e.cri.runtime.status({ verbose: true });
  const cond = Object.fromEntries(st.status!.conditions.map((c) => [c.type, c.status]));
  assert.deepEqual(cond, { RuntimeReady: true, NetworkReady: true });
  assert.ok(st.info['config']?.startsWith('{'), 'verbose status carries the runtime config JSON');
  await e.cri.runtime.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: '10.231.1.0/24' } } });
});

test('image service: pull by tag and digest from the local registry, status, list filter, remove', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, rt } = e;
  const { imageRef } = await cri.image.pullImage({ image: { image: rt.images.busybox } });
  assert.match(imageRef, /^sha256:[0-9a-f]{64}$/);
  const st = await cri.image.imageStatus({ image: { image: rt.images.busybox }, verbose: true });
  assert.equal(st.image?.id, imageRef);
  assert.ok(st.image?.repoTags.includes(rt.images.busybox));
  assert.ok(Number(st.image?.size) > 0);
  const digestRef = st.image!.repoDigests[0]!;
  const byDigest = await cri.image.pullImage({ image: { image: digestRef } });
  assert.equal(byDigest.imageRef, imageRef);
  const filtered = await cri.image.listImages({ filter: { image: { image: rt.images.busybox } } });
  assert.deepEqual(filtered.images.map((i) => i.id), [imageRef]);
  const all = await cri.image.listImages({});
  assert.ok(all.images.some((i) => i.id === imageRef));
  const fs = await cri.image.imageFsInfo({});
  // containerd refreshes snapshot usage in the background, so usedBytes may still be 0 here.
  assert.match(fs.imageFilesystems[0]?.fsId?.mountpoint ?? '', /overlayfs|snapshotter/);
  assert.ok(Number(fs.imageFilesystems[0]?.timestamp) > 0);

  // A tag the registry does not have: a clear error naming the reference.
  const missing = `${rt.registryHost}/busybox:no-such-tag`;
  await assert.rejects(cri.image.pullImage({ image: { image: missing } }), (err: Error) => {
    assert.ok(err.message.includes(missing), `message: ${err.message}`);
    assert.match(err.message, /not found/);
    return true;
  });

  await cri.image.removeImage({ image: { image: imageRef } });
  await cri.image.removeImage({ image: { image: imageRef } }); // idempotent
  assert.equal((await cri.image.imageStatus({ image: { image: rt.images.busybox } })).image, null);
});

test('a failed RunPodSandbox leaves no sandbox behind', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, logDir } = e;
  const badHandler = podConfig('bad-handler', logDir);
  await assert.rejects(cri.runtime.runPodSandbox({ config: badHandler, runtimeHandler: 'no-such-handler' }), /no-such-handler/);
  const badSysctl = podConfig('bad-sysctl', logDir);
  badSysctl.linux = { ...badSysctl.linux, sysctls: { 'net.nodelet.bogus': '1' } };
  await assert.rejects(cri.runtime.runPodSandbox({ config: badSysctl }), (err: Error) => {
    assert.match(err.message, /^cri RunPodSandbox for pod "default\/bad-sysctl" failed: /);
    return true;
  });
  for (const cfg of [badHandler, badSysctl]) {
    const left = await cri.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.uid': cfg.metadata!.uid! } } });
    assert.deepEqual(left.items, [], `no sandbox left for ${cfg.metadata!.name}`);
  }
});

test('RPCs containerd 1.6 does not implement fail with ERR_UNIMPLEMENTED', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri } = e;
  await assert.rejects(cri.runtime.checkpointContainer({ containerId: 'x', location: '/tmp/x.tar' }), (er: Error) => hasCode(er, 'ERR_UNIMPLEMENTED'));
  await assert.rejects(cri.runtime.listMetricDescriptors({}), (er: Error) => hasCode(er, 'ERR_UNIMPLEMENTED'));
  await assert.rejects(cri.runtime.listPodSandboxMetrics({}), (er: Error) => hasCode(er, 'ERR_UNIMPLEMENTED'));
  await assert.rejects(async () => {
    for await (const _ of cri.runtime.getContainerEvents({})) break;
  }, (er: Error) => hasCode(er, 'ERR_UNIMPLEMENTED'));
});

test('a runtime socket that is missing fails fast with a clear message', async () => {
  const cri = createCriClient({ endpoint: 'unix:///run/nodelet-test-missing/containerd.sock', timeoutMs: 120_000 });
  try {
    const started = Date.now();
    await assert.rejects(handshake(cri), (err: Error) => {
      assert.equal(errCode(err), 'ERR_UNAVAILABLE');
      assert.match(err.message, /container runtime at unix:\/\/\/run\/nodelet-test-missing\/containerd\.sock is not reachable: .*ENOENT.*; is containerd running\?/);
      return true;
    });
    assert.ok(Date.now() - started < 5_000, `failed after ${Date.now() - started} ms, well within the deadline`);
  } finally {
    cri.close();
  }
});

test('after containerd restarts, the same client works again and sandboxes survive', async (t) => {
  const e = need(t);
  if (!e) return;
  const { cri, rt, logDir } = e;
  const pod = podConfig('survivor', logDir);
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: pod });
  const paths = containerdPaths(rt.dir);

  await stopContainerd(paths, rt.pid);
  await assert.rejects(cri.runtime.version({ version: '0.1.0' }, { timeoutMs: 10_000 }), (er: Error) => hasCode(er, 'ERR_UNAVAILABLE'));
  const restarted = await startContainerd(paths, { readyTimeoutMs: 30_000 });
  // The harness only knows the first PID; stop the one started here ourselves, after the sandbox.
  t.after(async () => {
    await cri.runtime.removePodSandbox({ podSandboxId }, { timeoutMs: 30_000 }).catch(() => {});
    await stopContainerd(paths, restarted.pid);
  });

  const v = await cri.runtime.version({ version: '0.1.0' });
  assert.equal(v.version, '0.1.0');
  const st = await cri.runtime.podSandboxStatus({ podSandboxId });
  assert.equal(st.status?.id, podSandboxId);
  await cri.runtime.stopPodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
});
