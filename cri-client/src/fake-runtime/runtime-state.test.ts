// The shared fake runtime model: where the gRPC fake and the hollow node's runtime used to disagree,
// containerd's CRI plugin decides (internal/cri/server: sandbox_stop/remove, container_start/stop/create).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { createCriClient } from '../client.js';
import { CriError } from '../errors.js';
import { FakeCriServer } from '../testing/index.js';
import { FakeRuntimeState, type FakePodNetwork } from './index.js';

const sandboxConfig = (name: string, o: { hostNetwork?: boolean; attempt?: number } = {}) => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: o.attempt ?? 0 },
  labels: { 'io.kubernetes.pod.uid': `uid-${name}` },
  logDirectory: `/var/log/pods/default_${name}_uid-${name}`,
  ...(o.hostNetwork ? { linux: { securityContext: { namespaceOptions: { network: 'NODE' as const } } } } : {}),
});
const containerConfig = (name: string) => ({ metadata: { name, attempt: 0 }, image: { image: 'busybox' }, logPath: `${name}/0.log` });

/** A network that records what is set up and torn down. */
function recordingNetwork(): FakePodNetwork & { live: Set<string> } {
  let n = 2;
  const live = new Set<string>();
  return {
    live,
    setUp: () => {
      const ip = `10.0.0.${n++}`;
      live.add(ip);
      return ip;
    },
    tearDown: (ip) => void live.delete(ip),
  };
}

/** The error `f` throws: a CriError with containerd's gRPC status (and the ERR_* a client sees). */
function failure(f: () => unknown): CriError {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof CriError, `a CriError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a failure');
}

function runtime(o: { stopExitCode?: number } = {}) {
  const network = recordingNetwork();
  const s = new FakeRuntimeState({ network, nowNs: () => 5n, ...o });
  s.addImage('busybox');
  return { s, network };
}

test('RemovePodSandbox force-stops a READY sandbox (its network torn down) and removes its containers; removing again or an unknown ID succeeds', () => {
  const { s, network } = runtime();
  const sb = s.runPodSandbox(sandboxConfig('a'));
  const c = s.createContainer(sb, containerConfig('app'));
  s.startContainer(c);
  assert.equal(network.live.size, 1);
  s.removePodSandbox(sb);
  assert.equal(network.live.size, 0, 'the forced stop released the pod IP (the old gRPC fake never did)');
  assert.equal(s.containers.size, 0);
  assert.equal(s.sandboxes.size, 0);
  s.removePodSandbox(sb);
  s.removeContainer(c);
  s.removeContainer('');
});

test('an unknown ID is NOT_FOUND for stop, status and start, an ambiguous prefix is UNKNOWN, a unique prefix resolves', () => {
  const { s } = runtime();
  const unknown = 'f'.repeat(64);
  for (const f of [() => s.stopPodSandbox(unknown), () => s.podSandboxStatus(unknown), () => s.stopContainer(unknown), () => s.startContainer(unknown), () => s.containerStatus(unknown)]) {
    const e = failure(f);
    assert.equal(e.grpcStatus, 'NOT_FOUND');
    assert.ok(hasCode(e, 'ERR_NOT_FOUND'));
    assert.match(e.message, /^an error occurred when try to find (sandbox|container) "f+": not found$/);
  }
  assert.equal(failure(() => s.createContainer(unknown, containerConfig('x'))).grpcStatus, 'NOT_FOUND');
  const ids = Array.from({ length: 40 }, (_, i) => s.runPodSandbox(sandboxConfig(`p${i}`)));
  const a = ids[0] as string;
  assert.equal(s.podSandboxStatus(a.slice(0, 12)).id, a);
  // 40 random IDs: two share a first hex digit (pigeonhole over 16 digits).
  const shared = ids.find((id, i) => ids.some((o, j) => j !== i && o[0] === id[0])) as string;
  const e = failure(() => s.podSandboxStatus(shared[0]));
  assert.equal(e.grpcStatus, 'UNKNOWN', 'containerd returns truncindex\'s error unclassified (the old gRPC fake said INVALID_ARGUMENT)');
  assert.ok(hasCode(e, 'ERR_INTERNAL'));
  assert.match(e.message, /multiple IDs found with provided prefix/);
});

test('StartContainer: only a CREATED container starts (else UNKNOWN); in a sandbox not READY it fails UNKNOWN and the container is EXITED 128 StartError', () => {
  const { s } = runtime();
  const sb = s.runPodSandbox(sandboxConfig('a'));
  const c = s.createContainer(sb, containerConfig('app'));
  s.startContainer(c);
  assert.equal(s.containerStatus(c).state, 'CONTAINER_RUNNING');
  const twice = failure(() => s.startContainer(c));
  assert.equal(twice.grpcStatus, 'UNKNOWN', 'the old hollow runtime said FAILED_PRECONDITION');
  assert.match(twice.message, /container is in CONTAINER_RUNNING state/);

  const late = s.createContainer(sb, containerConfig('late'));
  s.stopPodSandbox(sb);
  const e = failure(() => s.startContainer(late));
  assert.equal(e.grpcStatus, 'UNKNOWN');
  assert.equal(e.message, `sandbox container "${sb}" is not running`);
  const st = s.containerStatus(late);
  assert.deepEqual([st.state, st.exitCode, st.reason, st.message], ['CONTAINER_EXITED', 128, 'StartError', e.message]);
});

test('StopContainer stops only a running container (a CREATED one stays CREATED); StopPodSandbox SIGKILLs the running ones (137) and leaves the rest', () => {
  const { s, network } = runtime({ stopExitCode: 0 });
  const sb = s.runPodSandbox(sandboxConfig('a'));
  const created = s.createContainer(sb, containerConfig('created'));
  s.stopContainer(created);
  assert.equal(s.containerStatus(created).state, 'CONTAINER_CREATED', 'the old hollow runtime exited it');
  const graceful = s.createContainer(sb, containerConfig('graceful'));
  s.startContainer(graceful);
  s.stopContainer(graceful);
  assert.deepEqual([s.containerStatus(graceful).exitCode, s.containerStatus(graceful).reason], [0, 'Completed'], 'the stop exit code is the process\'s');
  const running = s.createContainer(sb, containerConfig('running'));
  s.startContainer(running);
  s.stopPodSandbox(sb);
  const st = s.containerStatus(running);
  assert.deepEqual([st.state, st.exitCode, st.reason], ['CONTAINER_EXITED', 137, 'Error']);
  assert.equal(s.containerStatus(created).state, 'CONTAINER_CREATED', 'the old hollow runtime exited CREATED containers with the sandbox');
  assert.equal(s.podSandboxStatus(sb).network?.ip, '');
  assert.equal(network.live.size, 0);
  s.stopPodSandbox(sb); // stopping again is fine and tears nothing down twice

  const def = runtime().s;
  const sb2 = def.runPodSandbox(sandboxConfig('b'));
  const c2 = def.createContainer(sb2, containerConfig('app'));
  def.startContainer(c2);
  def.stopContainer(c2);
  assert.equal(def.containerStatus(c2).exitCode, 137, 'by default the grace period runs out');
});

test('CreateContainer needs a READY sandbox and a present image; names are reserved until removal; host-network pods take no IP', () => {
  const { s, network } = runtime();
  const sb = s.runPodSandbox(sandboxConfig('a'));
  assert.equal(failure(() => s.runPodSandbox(sandboxConfig('a'))).grpcStatus, 'UNKNOWN', 'the old hollow runtime ran it twice');
  s.runPodSandbox(sandboxConfig('a', { attempt: 1 }));
  assert.equal(failure(() => s.createContainer(sb, { ...containerConfig('x'), image: { image: 'nginx' } })).grpcStatus, 'NOT_FOUND');
  const c = s.createContainer(sb, containerConfig('app'));
  assert.equal(failure(() => s.createContainer(sb, containerConfig('app'))).grpcStatus, 'UNKNOWN');
  assert.equal(s.containerStatus(c).logPath, '/var/log/pods/default_a_uid-a/app/0.log');
  s.stopPodSandbox(sb);
  const e = failure(() => s.createContainer(sb, containerConfig('other')));
  assert.equal(e.grpcStatus, 'NOT_FOUND');
  assert.ok(hasCode(e, 'ERR_NOT_FOUND'), 'the old hollow runtime said FAILED_PRECONDITION');

  const before = network.live.size;
  const host = s.runPodSandbox(sandboxConfig('h', { hostNetwork: true }));
  assert.equal(network.live.size, before);
  assert.equal(s.podSandboxStatus(host).network?.ip, '');
  assert.equal(s.podSandboxStatus(host).linux?.namespaces?.options?.network, 'NODE');

  const anyImage = new FakeRuntimeState({ anyImagePresent: true });
  const sb3 = anyImage.runPodSandbox(sandboxConfig('c'));
  anyImage.createContainer(sb3, { metadata: { name: 'x' }, image: { image: 'nginx:1.27' } });
  assert.equal(anyImage.images.size, 1, 'with every image present, a looked-up image is stored once');
});

test('list filters: ID and sandbox prefixes, labels, and a state given by name or by enum number', () => {
  const { s } = runtime();
  const a = s.runPodSandbox(sandboxConfig('a'));
  const b = s.runPodSandbox(sandboxConfig('b'));
  s.stopPodSandbox(b);
  assert.deepEqual(s.listPodSandbox({ state: { state: 'SANDBOX_READY' } }).map((x) => x.id), [a]);
  assert.deepEqual(s.listPodSandbox({ state: { state: 1 } }).map((x) => x.id), [b]);
  assert.deepEqual(s.listPodSandbox({ state: {} }).map((x) => x.id), [a], 'a state filter without a value is the zero value, READY');
  assert.deepEqual(s.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-b' } }).map((x) => x.id), [b]);
  const c = s.createContainer(a, containerConfig('app'));
  assert.deepEqual(s.listContainers({ podSandboxId: a.slice(0, 8), state: { state: 'CONTAINER_CREATED' } }).map((x) => x.id), [c]);
  assert.equal(s.listContainers({ state: { state: 'CONTAINER_RUNNING' } }).length, 0);
  const listed = s.listContainers({ id: c.slice(0, 6) })[0];
  assert.deepEqual([listed?.metadata, listed?.image?.image], [{ name: 'app', attempt: 0 }, 'busybox']);
});

test('over gRPC a client sees the failure an in-process caller gets: the same gRPC status, ERR_* and details', async (t) => {
  const fake = await FakeCriServer.start();
  t.after(() => fake.close());
  const cri = createCriClient({ endpoint: fake.endpoint });
  t.after(() => cri.close());
  fake.runtime.addImage('busybox');
  const { podSandboxId } = await cri.runtime.runPodSandbox({ config: sandboxConfig('a') });
  const { containerId } = await cri.runtime.createContainer({ podSandboxId, config: containerConfig('app') });
  await cri.runtime.startContainer({ containerId });
  const inProcess = failure(() => fake.runtime.startContainer(containerId));
  await assert.rejects(cri.runtime.startContainer({ containerId }), (e) =>
    e instanceof CriError && e.grpcStatus === inProcess.grpcStatus && hasCode(e, inProcess.code) && e.message.endsWith(inProcess.message));
});
