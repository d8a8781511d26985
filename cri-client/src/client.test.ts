import { test } from 'node:test';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import assert from 'node:assert/strict';
import { errCode, hasCode, isAbortError } from '@nodelet/base';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { connectCriClient, createCriClient, CRI_CALL_CHANNEL, handshake, type CriCallEvent } from './index.js';

const POD = { metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 }, labels: { app: 'web' }, logDirectory: '/tmp/x' };

async function setup(t: import('node:test').TestContext) {
  const fake = await FakeCriServer.start();
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(async () => {
    cri.close();
    await fake.close();
  });
  return { fake, cri };
}

test('handshake: Version 0.1.0 is sent and accepted', async (t) => {
  const { fake, cri } = await setup(t);
  const v = await handshake(cri);
  assert.equal(v.runtimeName, 'fake-cri');
  assert.deepEqual(fake.runtime.callsOf('Version'), [{ version: '0.1.0' }]);
});

test('handshake: a runtime answering another CRI version is rejected with a clear message', async (t) => {
  const { fake, cri } = await setup(t);
  fake.runtime.version = { version: '0.2.0', runtimeName: 'odd', runtimeVersion: '9', runtimeApiVersion: 'v2' };
  await assert.rejects(handshake(cri), (err: Error) => {
    assert.equal(errCode(err), 'ERR_FAILED_PRECONDITION');
    assert.match(err.message, /answered CRI version "0\.2\.0", nodelet needs "0\.1\.0"/);
    return true;
  });
});

test('sandbox and container lifecycle round-trips through real gRPC serialization', async (t) => {
  const { fake, cri } = await setup(t);
  fake.runtime.addImage('busybox:1.36');
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: POD });
  assert.match(podSandboxId, /^[0-9a-f]{64}$/);
  const { containerId } = await cri.runtime.createContainer({
    podSandboxId,
    config: { metadata: { name: 'main' }, image: { image: 'busybox:1.36' }, command: ['sleep', '60'], logPath: 'main/0.log' },
    sandboxConfig: POD,
  });
  await cri.runtime.startContainer({ containerId });
  const st = await cri.runtime.containerStatus({ containerId });
  assert.equal(st.status?.state, 'CONTAINER_RUNNING');
  assert.equal(typeof st.status?.createdAt, 'string', 'int64 arrives as a decimal string');
  assert.equal(st.status?.logPath, '/tmp/x/main/0.log');
  const list = await cri.runtime.listContainers({ filter: { podSandboxId, state: { state: 'CONTAINER_RUNNING' } } });
  assert.deepEqual(list.containers.map((c) => c.id), [containerId]);
  const pods = await cri.runtime.listPodSandbox({ filter: { labelSelector: { app: 'web' } } });
  assert.equal(pods.items[0]?.metadata?.name, 'web');
  await cri.runtime.stopContainer({ containerId, timeout: '0' });
  await cri.runtime.removeContainer({ containerId });
  await cri.runtime.removeContainer({ containerId }); // idempotent
  await cri.runtime.stopPodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
  await cri.runtime.removePodSandbox({ podSandboxId });
  assert.equal((await cri.runtime.listPodSandbox({})).items.length, 0);
});

test('NOT_FOUND becomes ERR_NOT_FOUND and the message names the RPC and the ID', async (t) => {
  const { cri } = await setup(t);
  await assert.rejects(cri.runtime.containerStatus({ containerId: 'deadbeef' }), (err: Error) => {
    assert.ok(hasCode(err, 'ERR_NOT_FOUND'));
    assert.match(err.message, /^cri ContainerStatus for container "deadbeef" failed: .*not found/);
    return true;
  });
  await assert.rejects(cri.runtime.podSandboxStatus({ podSandboxId: 'cafe' }), /PodSandboxStatus for sandbox "cafe"/);
});

test('gRPC status codes map to stable error codes in one place', async (t) => {
  const { fake, cri } = await setup(t);
  const cases = [
    ['INVALID_ARGUMENT', 'ERR_INVALID_ARGUMENT'],
    ['ALREADY_EXISTS', 'ERR_ALREADY_EXISTS'],
    ['FAILED_PRECONDITION', 'ERR_FAILED_PRECONDITION'],
    ['RESOURCE_EXHAUSTED', 'ERR_RESOURCE_EXHAUSTED'],
    ['UNKNOWN', 'ERR_INTERNAL'],
    ['INTERNAL', 'ERR_INTERNAL'],
    ['PERMISSION_DENIED', 'ERR_PERMISSION_DENIED'],
    ['ABORTED', 'ERR_CONFLICT'],
  ] as const;
  for (const [grpcCode, code] of cases) {
    fake.runtime.injectError('RunPodSandbox', grpcCode, `boom ${grpcCode}`);
    await assert.rejects(cri.runtime.runPodSandbox({ config: POD }), (err: Error) => {
      assert.equal(errCode(err), code, grpcCode);
      assert.match(err.message, new RegExp(`cri RunPodSandbox for pod "default/web" failed: boom ${grpcCode}`));
      return true;
    });
  }
});

test('UNIMPLEMENTED RPCs (containerd 1.6: checkpoint, events, metrics) give ERR_UNIMPLEMENTED', async (t) => {
  const { cri } = await setup(t);
  await assert.rejects(cri.runtime.checkpointContainer({ containerId: 'x' }), (e: Error) => hasCode(e, 'ERR_UNIMPLEMENTED'));
  await assert.rejects(cri.runtime.listMetricDescriptors({}), (e: Error) => hasCode(e, 'ERR_UNIMPLEMENTED'));
  await assert.rejects(async () => {
    for await (const _ of cri.runtime.getContainerEvents({})) assert.fail('no events expected');
  }, (e: Error) => hasCode(e, 'ERR_UNIMPLEMENTED'));
});

test('a call that outlives its deadline fails with ERR_DEADLINE_EXCEEDED naming the RPC', async (t) => {
  const { fake, cri } = await setup(t);
  fake.runtime.hang('ListPodSandbox');
  const started = Date.now();
  await assert.rejects(cri.runtime.listPodSandbox({}, { timeoutMs: 300 }), (err: Error) => {
    assert.ok(hasCode(err, 'ERR_DEADLINE_EXCEEDED'));
    assert.match(err.message, /cri ListPodSandbox did not finish within 300ms/);
    return true;
  });
  assert.ok(Date.now() - started < 2_000);
});

test('aborting the signal cancels the call and rejects with AbortError', async (t) => {
  const { fake, cri } = await setup(t);
  fake.runtime.hang('Status');
  const ac = new AbortController();
  const p = cri.runtime.status({}, { signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(p, (err: unknown) => isAbortError(err));
  await assert.rejects(cri.runtime.status({}, { signal: AbortSignal.abort() }), (err: unknown) => isAbortError(err));
});

test('a missing socket fails fast with ERR_UNAVAILABLE and says what to check', async () => {
  const cri = createCriClient({ endpoint: 'unix:///nonexistent/nodelet-test/containerd.sock' });
  try {
    const started = Date.now();
    await assert.rejects(cri.runtime.version({ version: '0.1.0' }), (err: Error) => {
      assert.ok(hasCode(err, 'ERR_UNAVAILABLE'));
      assert.match(err.message, /^container runtime at unix:\/\/\/nonexistent\/nodelet-test\/containerd\.sock is not reachable: .*; is containerd running\?$/);
      return true;
    });
    assert.ok(Date.now() - started < 5_000, 'fails well before the 2 min deadline');
    // Non-idempotent calls are not resent: one attempt, still fast.
    await assert.rejects(cri.runtime.runPodSandbox({ config: POD }), (e: Error) => hasCode(e, 'ERR_UNAVAILABLE'));
  } finally {
    cri.close();
  }
});

test('calls succeed again after the runtime restarts on the same socket', async (t) => {
  const { fake, cri } = await setup(t);
  await cri.runtime.version({ version: '0.1.0' });
  await fake.stop();
  await assert.rejects(cri.runtime.runPodSandbox({ config: POD }), (e: Error) => hasCode(e, 'ERR_UNAVAILABLE'));
  await assert.rejects(cri.runtime.version({ version: '0.1.0' }), (e: Error) => hasCode(e, 'ERR_UNAVAILABLE'));
  await fake.listen();
  // The channel is in reconnect backoff now; calls wait for it, so the first call after the restart
  // works — also a non-idempotent one, which is only sent once connected.
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: POD });
  assert.match(podSandboxId, /^[0-9a-f]{64}$/);
  assert.equal(fake.runtime.callsOf('RunPodSandbox').length, 1, 'sent exactly once');
  const v = await cri.runtime.version({ version: '0.1.0' });
  assert.equal(v.version, '0.1.0');
});

test('connectCriClient waits for a runtime that comes up late', async (t) => {
  const fake = await FakeCriServer.start();
  t.after(() => fake.close());
  await fake.stop();
  setTimeout(() => void fake.listen(), 600);
  const { client, version } = await connectCriClient({ endpoint: fake.endpoint, waitMs: 10_000 });
  client.close();
  assert.equal(version.version, '0.1.0');
});

test('replies up to 16 MiB are accepted (gRPC default is 4 MiB)', async (t) => {
  const { fake, cri } = await setup(t);
  fake.runtime.addImage('busybox');
  fake.runtime.execSync = () => ({ stdout: 'x'.repeat(10 * 1024 * 1024), exitCode: 3 });
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: POD });
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: { metadata: { name: 'c' }, image: { image: 'busybox' } } });
  await cri.runtime.startContainer({ containerId });
  const r = await cri.runtime.execSync({ containerId, cmd: ['big'] });
  assert.equal(r.stdout.length, 10 * 1024 * 1024);
  assert.equal(r.exitCode, 3);
});

test('image service: pull, status (absent → null), list, remove is idempotent, fs info', async (t) => {
  const { cri } = await setup(t);
  const absent = await cri.image.imageStatus({ image: { image: 'busybox' } });
  assert.equal(absent.image, null);
  const { imageRef } = await cri.image.pullImage({ image: { image: 'busybox' } });
  const st = await cri.image.imageStatus({ image: { image: 'docker.io/library/busybox:latest' } });
  assert.equal(st.image?.id, imageRef);
  assert.equal((await cri.image.listImages({})).images.length, 1);
  await cri.image.removeImage({ image: { image: imageRef } });
  await cri.image.removeImage({ image: { image: imageRef } });
  const fs = await cri.image.imageFsInfo({});
  assert.ok(fs.imageFilesystems[0]?.fsId?.mountpoint);
});

test('closed clients fail with ERR_UNAVAILABLE; close is idempotent', async (t) => {
  const { cri } = await setup(t);
  cri.close();
  cri.close();
  await assert.rejects(cri.runtime.version({}), (e: Error) => hasCode(e, 'ERR_UNAVAILABLE'));
});

test('bad endpoints are rejected up front', () => {
  assert.throws(() => createCriClient({ endpoint: 'tcp://1.2.3.4:10' }), /scheme "tcp" is not supported/);
  assert.throws(() => createCriClient({ endpoint: 'unix://relative.sock' }), /must be absolute/);
});

test('every call is published on the nodelet:cri:call diagnostics channel', async (t) => {
  const { cri } = await setup(t);
  const events: CriCallEvent[] = [];
  const onEvent = (m: unknown): void => void events.push(m as CriCallEvent);
  subscribe(CRI_CALL_CHANNEL, onEvent);
  t.after(() => unsubscribe(CRI_CALL_CHANNEL, onEvent));
  await cri.runtime.version({});
  await cri.runtime.containerStatus({ containerId: 'nope' }).catch(() => {});
  assert.deepEqual(events.map((e) => [e.rpc, e.error]), [['Version', undefined], ['ContainerStatus', 'ERR_NOT_FOUND']]);
  assert.ok(events.every((e) => e.durationMs >= 0 && e.endpoint.startsWith('unix://')));
});
