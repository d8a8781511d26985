/**
 * PodSpec fields the agent honours or refuses, on real containerd with the real API server and
 * the in-process agent: image pull secrets against a registry that wants a password, gRPC probes
 * following a health server, the agent-managed /etc/hosts with hostAliases, a shared PID
 * namespace, an unsupported volume that never starts, activeDeadlineSeconds and hostUsers: false.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { PODS, SECRETS, type Pod, type Volume } from '@nodelet/api';
import { DEFAULT_LAB_IMAGE_DIR, LAB_IMAGES, ensureLabImages, startRegistry, type Registry } from '@nodelet/oci';
import { renderHostsToml } from '@nodelet/lab-runtime';
import { FakeHealthServer } from '@nodelet/cri-client/testing';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

let h: Harness | undefined;
let skip = false;

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  h = await startHarness('fields', { crashLoopBackOff: { initialContainerRestartPeriod: '1s', maxContainerRestartPeriod: '2s' } }, 41);
});
after(async () => {
  await h?.stop();
});

const SLEEP = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'];
const ctr = (p: Pod, name: string) => p.status?.containerStatuses?.find((c) => c.name === name);
const cond = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
const eventsOf = (name: string) => h!.agent.events.recent.filter((e) => e.pod === `default/${name}`);

async function exec(containerId: string, cmd: string[]): Promise<string> {
  const r = await h!.cri.runtime.execSync({ containerId: containerId.replace('containerd://', ''), cmd, timeout: 10 });
  assert.equal(r.exitCode, 0, `exec ${cmd.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function running(name: string): Promise<Pod> {
  let last: Pod | undefined;
  try {
    return await pollUntil(`pod ${name} running`, async () => {
      const p = (last = await getPod(h!, name));
      return p.status?.containerStatuses?.length && p.status.containerStatuses.every((c) => c.state?.running) ? p : undefined;
    }, { timeoutMs: 60_000 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; status ${JSON.stringify(last?.status?.containerStatuses)}; events ${JSON.stringify(eventsOf(name))}`, { cause: err });
  }
}

test('imagePullSecrets: a registry that wants a password serves the pod with the secret, and refuses the one without', async (t) => {
  if (skip) return t.skip('needs root');
  const images = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR);
  const reg: Registry = await startRegistry({ root: images.dir, basicAuth: { username: 'puller', password: 's3cret' } });
  t.after(() => reg.close());
  // containerd reads certs.d/<host>/hosts.toml per pull: this registry is plain HTTP too.
  const hostsDir = join(h!.rt.dir, 'certs.d', reg.hostPort);
  await mkdir(hostsDir, { recursive: true });
  await writeFile(join(hostsDir, 'hosts.toml'), renderHostsToml(reg.hostPort));
  const image = `${reg.hostPort}/${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`;
  const auth = Buffer.from('puller:s3cret').toString('base64');
  await h!.api.create(SECRETS, {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'regcred', namespace: 'default' }, type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [reg.hostPort]: { auth } } })).toString('base64') },
  });
  await h!.api.create(PODS, podSpec(h!, 'private', { imagePullSecrets: [{ name: 'regcred' }], containers: [{ name: 'app', image, imagePullPolicy: 'Always', command: SLEEP }] }));
  await h!.api.create(PODS, podSpec(h!, 'anonymous', { containers: [{ name: 'app', image, imagePullPolicy: 'Always', command: SLEEP }] }));

  await running('private');
  const refused = await pollUntil('pod anonymous waiting in ErrImagePull/ImagePullBackOff', async () => {
    const w = ctr(await getPod(h!, 'anonymous'), 'app')?.state?.waiting;
    return w && (w.reason === 'ErrImagePull' || w.reason === 'ImagePullBackOff') ? w : undefined;
  }, { timeoutMs: 60_000 });
  assert.ok(refused.reason);
  const failed = await pollUntil('the Failed pull event of pod anonymous', () => eventsOf('anonymous').find((e) => e.reason === 'Failed' && e.message.startsWith('Failed to pull image')), { timeoutMs: 30_000 });
  assert.match(failed.message, /401|[Uu]nauthorized/);
  await h!.api.delete(PODS, 'private', { namespace: 'default' });
  await h!.api.delete(PODS, 'anonymous', { namespace: 'default' });
});

test('a gRPC readiness probe follows the health server: SERVING is Ready, NOT_SERVING is not', async (t) => {
  if (skip) return t.skip('needs root');
  // A host-network pod: the probe dials the node's address, where the test's health server listens.
  const hs = await FakeHealthServer.start({ host: '127.0.0.1' });
  t.after(() => hs.close());
  await h!.api.create(PODS, podSpec(h!, 'grpc', {
    hostNetwork: true,
    containers: [{ name: 'app', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP, readinessProbe: { grpc: { port: hs.port }, periodSeconds: 1, failureThreshold: 1 } }],
  }));
  await pollUntil('pod grpc Ready', async () => cond(await getPod(h!, 'grpc'), 'Ready')?.status === 'True', { timeoutMs: 60_000 });
  hs.set('', 'NOT_SERVING');
  await pollUntil('pod grpc not Ready', async () => cond(await getPod(h!, 'grpc'), 'Ready')?.status === 'False', { timeoutMs: 20_000 });
  await pollUntil('Unhealthy event naming NOT_SERVING', () => eventsOf('grpc').some((e) => e.reason === 'Unhealthy' && e.message === 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")'), { timeoutMs: 10_000 });
  hs.set('', 'SERVING');
  await pollUntil('pod grpc Ready again', async () => cond(await getPod(h!, 'grpc'), 'Ready')?.status === 'True', { timeoutMs: 20_000 });
  await h!.api.delete(PODS, 'grpc', { namespace: 'default' });
});

test('/etc/hosts is the agent\'s: the pod\'s FQDN line and the hostAliases block; shareProcessNamespace shows the other container\'s processes', async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'hosts', {
    hostname: 'web-0', subdomain: 'web', shareProcessNamespace: true,
    hostAliases: [{ ip: '10.9.8.7', hostnames: ['foo.local', 'bar.local'] }],
    containers: [
      { name: 'app', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP },
      { name: 'side', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exec sleep 3601'] },
    ],
  }));
  const p = await running('hosts');
  const hosts = await exec(ctr(p, 'app')!.containerID!, ['cat', '/etc/hosts']);
  assert.equal(hosts, [
    '# Kubernetes-managed hosts file.', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', 'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix', 'fe00::1\tip6-allnodes', 'fe00::2\tip6-allrouters', `${p.status!.podIP}\tweb-0.web.default.svc.cluster.local\tweb-0`,
    '', '# Entries added by HostAliases.', '10.9.8.7\tfoo.local\tbar.local', '',
  ].join('\n'));
  const ps = await exec(ctr(p, 'app')!.containerID!, ['ps', '-o', 'args']);
  assert.match(ps, /sleep 3601/, `the side container's process is visible: ${ps}`);
  await h!.api.delete(PODS, 'hosts', { namespace: 'default' });
});

test('a volume the node cannot provide keeps the pod in ContainerCreating with a FailedMount event that says why', async (t) => {
  if (skip) return t.skip('needs root');
  const csi = { name: 'data', csi: { driver: 'csi.example.com' } } as unknown as Volume;
  await h!.api.create(PODS, podSpec(h!, 'csi', { volumes: [csi], containers: [{ name: 'app', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] }));
  await pollUntil('FailedMount event of pod csi', () => eventsOf('csi').some((e) => e.reason === 'FailedMount' && e.type === 'Warning' && e.message === 'volume "data": csi volumes are not supported on this node'), { timeoutMs: 30_000 });
  // The status write is asynchronous to the event: awaited.
  const p = await pollUntil('pod csi reported waiting', async () => {
    const x = await getPod(h!, 'csi');
    return ctr(x, 'app')?.state?.waiting ? x : undefined;
  }, { timeoutMs: 20_000 });
  assert.equal(p.status?.phase, 'Pending');
  assert.equal(ctr(p, 'app')?.state?.waiting?.reason, 'ContainerCreating');
  const sandboxes = (await h!.cri.runtime.listPodSandbox({})).items.filter((s) => s.metadata?.name === 'csi');
  assert.equal(sandboxes.length, 0, 'no sandbox for a pod whose volumes cannot be provided');
  await h!.api.delete(PODS, 'csi', { namespace: 'default' });
});

test('activeDeadlineSeconds fails the pod with DeadlineExceeded and stops its containers; hostUsers: false is refused', async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'deadline', { activeDeadlineSeconds: 3, containers: [{ name: 'app', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP }] }));
  await h!.api.create(PODS, podSpec(h!, 'userns', { hostUsers: false, containers: [{ name: 'app', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP }] }));
  const failed = await pollUntil('pod deadline Failed', async () => {
    const p = await getPod(h!, 'deadline');
    return p.status?.phase === 'Failed' && ctr(p, 'app')?.state?.terminated ? p : undefined;
  }, { timeoutMs: 60_000 });
  assert.deepEqual([failed.status!.reason, failed.status!.message], ['DeadlineExceeded', 'Pod was active on the node longer than the specified deadline']);
  assert.ok(eventsOf('deadline').some((e) => e.reason === 'DeadlineExceeded'));
  const refused = await pollUntil('pod userns refused', async () => {
    const p = await getPod(h!, 'userns');
    return p.status?.phase === 'Failed' ? p : undefined;
  }, { timeoutMs: 20_000 });
  assert.equal(refused.status!.reason, 'UserNamespacesNotSupported');
  assert.match(refused.status!.message ?? '', /^Pod was rejected: the pod asks for a user namespace \(hostUsers: false\)/);
  assert.equal((await h!.cri.runtime.listPodSandbox({})).items.filter((s) => s.metadata?.name === 'userns').length, 0);
  await h!.api.delete(PODS, 'deadline', { namespace: 'default' });
  await h!.api.delete(PODS, 'userns', { namespace: 'default' });
});
