/**
 * securityContext on real containerd with the in-process agent: a privileged pod may create a
 * network interface (its sandbox is privileged too, else containerd refuses it) and an
 * unprivileged one may not; runAsNonRoot with a root image is CreateContainerConfigError;
 * fsGroup owns an emptyDir for a non-root user; seccomp RuntimeDefault, capabilities drop ALL,
 * readOnlyRootFilesystem and allowPrivilegeEscalation false take effect in the process, as does a
 * Localhost seccomp profile from the agent's seccomp directory; safe sysctls are set and unsafe
 * ones refused at admission unless allowed; AppArmor profiles are refused on this host (no AppArmor).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { EVENTS, PODS, type Container, type Pod } from '@nodelet/api';
import { appArmorEnabled } from '../../src/admission/security.js';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

let h: Harness | undefined;
let skip = false;
const appArmorHost = appArmorEnabled();

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  h = await startHarness('sec', { allowedUnsafeSysctls: ['net.ipv4.conf.all.*'] }, 41);
});
after(async () => {
  await h?.stop();
});

const SLEEP = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'];

function box(name: string, extra: Partial<Container> = {}): Container {
  return { name, image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: SLEEP, ...extra };
}

async function running(name: string): Promise<Pod> {
  return pollUntil(`${name} Running`, async () => {
    const p = await getPod(h!, name);
    return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) ? p : undefined;
  }, { timeoutMs: 60_000 });
}

/** Runs `cmd` in container `c` of `pod`: exit code and output. */
async function run(pod: Pod, c: string, cmd: string[]): Promise<{ code: number; out: string }> {
  const id = pod.status!.containerStatuses!.find((s) => s.name === c)!.containerID!.replace('containerd://', '');
  const r = await h!.cri.runtime.execSync({ containerId: id, cmd, timeout: 10 });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

async function remove(name: string): Promise<void> {
  await h!.api.delete(PODS, name, { namespace: 'default', gracePeriodSeconds: 0 });
  await pollUntil(`${name} gone`, () => getPod(h!, name).then(() => false, () => true), { timeoutMs: 60_000 });
}

test('a privileged pod starts and may create a network interface; an unprivileged one may not', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  // Before: containerd refused the container ("no privileged container allowed in sandbox").
  await h!.api.create(PODS, podSpec(h!, 'priv', { containers: [box('c', { securityContext: { privileged: true } })] }));
  await h!.api.create(PODS, podSpec(h!, 'unpriv', { containers: [box('c')] }));
  const priv = await running('priv');
  const unpriv = await running('unpriv');
  // The interface lives in the pod's own network namespace, gone with the pod. (This kernel has no
  // dummy driver; a bridge needs CAP_NET_ADMIN all the same.)
  const made = await run(priv, 'c', ['ip', 'link', 'add', 'nlsec0', 'type', 'bridge']);
  assert.equal(made.code, 0, made.out);
  assert.match((await run(priv, 'c', ['ip', 'link', 'show', 'nlsec0'])).out, /nlsec0/);
  const refused = await run(unpriv, 'c', ['ip', 'link', 'add', 'nlsec0', 'type', 'bridge']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.out, /Operation not permitted/);
  await Promise.all([remove('priv'), remove('unpriv')]);
});

test('runAsNonRoot with an image that runs as root: CreateContainerConfigError with kubelet\'s message, never created', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'nonroot', { securityContext: { runAsNonRoot: true }, containers: [box('c')] }));
  const p = await pollUntil('nonroot waiting in CreateContainerConfigError', async () => {
    const pod = await getPod(h!, 'nonroot');
    return pod.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError' ? pod : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(p.status!.containerStatuses![0]!.state!.waiting!.message, `container has runAsNonRoot and image will run as root (pod: "nonroot_default(${p.metadata.uid})", container: c)`);
  const created = await h!.cri.runtime.listContainers({ filter: { labelSelector: { 'io.kubernetes.pod.uid': p.metadata.uid! } } });
  assert.equal(created.containers.length, 0);
  await remove('nonroot');
});

test('fsGroup: a non-root user has the group, and the emptyDir is the group\'s (setgid) so what it writes is too', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'fsgroup', {
    securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] },
    volumes: [{ name: 'data', emptyDir: {} }],
    containers: [box('c', { volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
  }));
  const p = await running('fsgroup');
  assert.deepEqual((await run(p, 'c', ['id', '-u'])).out.trim(), '1000');
  assert.deepEqual((await run(p, 'c', ['id', '-G'])).out.trim().split(' ').sort(), ['2000', '3000', '4000']);
  assert.equal((await run(p, 'c', ['sh', '-c', 'echo hi > /data/f'])).code, 0);
  assert.equal((await run(p, 'c', ['stat', '-c', '%g %A', '/data'])).out.trim(), '2000 drwxrwsrwx');
  assert.equal((await run(p, 'c', ['stat', '-c', '%u %g', '/data/f'])).out.trim(), '1000 2000');
  await remove('fsgroup');
});

test('seccomp RuntimeDefault blocks unshare, capabilities drop ALL blocks chown, a read-only rootfs refuses writes, no_new_privs is set', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'confined', {
    volumes: [{ name: 'scratch', emptyDir: {} }],
    containers: [
      box('plain'),
      box('seccomp', { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }),
      box('nocaps', { securityContext: { capabilities: { drop: ['ALL'] } } }),
      box('ro', { securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }, volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }),
    ],
  }));
  const p = await running('confined');
  const status = async (c: string, field: string) => (await run(p, c, ['grep', `^${field}:`, '/proc/self/status'])).out.split(':')[1]!.trim();
  // kubelet's default without seccompDefault is Unconfined; RuntimeDefault is containerd's profile.
  assert.equal(await status('plain', 'Seccomp'), '0');
  assert.equal(await status('seccomp', 'Seccomp'), '2');
  // containerd's default profile allows unshare only with CAP_SYS_ADMIN.
  assert.equal((await run(p, 'plain', ['unshare', '-U', 'true'])).code, 0);
  const blocked = await run(p, 'seccomp', ['unshare', '-U', 'true']);
  assert.notEqual(blocked.code, 0);
  assert.match(blocked.out, /Operation not permitted/);

  assert.equal((await run(p, 'plain', ['sh', '-c', 'touch /tmp/f && chown 1:1 /tmp/f'])).code, 0);
  const chown = await run(p, 'nocaps', ['sh', '-c', 'touch /tmp/f && chown 1:1 /tmp/f']);
  assert.notEqual(chown.code, 0);
  assert.match(chown.out, /Operation not permitted/);
  assert.equal(await status('nocaps', 'CapEff'), '0000000000000000');

  const write = await run(p, 'ro', ['touch', '/x']);
  assert.notEqual(write.code, 0);
  assert.match(write.out, /Read-only file system/);
  assert.equal((await run(p, 'ro', ['touch', '/scratch/x'])).code, 0);
  assert.equal(await status('ro', 'NoNewPrivs'), '1');
  assert.equal(await status('plain', 'NoNewPrivs'), '0');
  await remove('confined');
});

test('sysctls: a safe one and an allowed unsafe one are set in the pod; an unsafe one not allowed fails the pod with SysctlForbidden', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  await h!.api.create(PODS, podSpec(h!, 'sysctl', {
    securityContext: { sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '40000 41000' }, { name: 'net.ipv4.conf.all.log_martians', value: '1' }] },
    containers: [box('c')],
  }));
  const p = await running('sysctl');
  assert.equal((await run(p, 'c', ['cat', '/proc/sys/net/ipv4/ip_local_port_range'])).out.trim().split(/\s+/).join(' '), '40000 41000');
  assert.equal((await run(p, 'c', ['cat', '/proc/sys/net/ipv4/conf/all/log_martians'])).out.trim(), '1');

  await h!.api.create(PODS, podSpec(h!, 'unsafe', { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '65536' }] }, containers: [box('c')] }));
  const refused = await pollUntil('unsafe Failed', async () => {
    const pod = await getPod(h!, 'unsafe');
    return pod.status?.phase === 'Failed' ? pod : undefined;
  }, { timeoutMs: 30_000 });
  assert.equal(refused.status!.reason, 'SysctlForbidden');
  assert.equal(refused.status!.message, 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
  await pollUntil('the SysctlForbidden event', async () => (await h!.api.list(EVENTS, { namespace: 'default' })).items.some((e) => e.reason === 'SysctlForbidden' && e.involvedObject?.name === 'unsafe'), { timeoutMs: 15_000 });
  const sandboxes = (await h!.cri.runtime.listPodSandbox({})).items.filter((s) => s.metadata?.name === 'unsafe');
  assert.equal(sandboxes.length, 0);
  await Promise.all([remove('sysctl'), remove('unsafe')]);
});

test('a Localhost seccomp profile from <root-dir>/seccomp is applied: the syscalls it denies fail', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const dir = join(h!.dir, 'root', 'seccomp', 'profiles');
  await mkdir(dir, { recursive: true });
  const profile = { defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO' }] };
  await writeFile(join(dir, 'no-mkdir.json'), JSON.stringify(profile));
  await h!.api.create(PODS, podSpec(h!, 'localhost', {
    containers: [box('c', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/no-mkdir.json' } } }), box('plain')],
  }));
  const p = await running('localhost');
  const denied = await run(p, 'c', ['mkdir', '/tmp/x']);
  assert.notEqual(denied.code, 0);
  assert.match(denied.out, /Operation not permitted/);
  assert.equal((await run(p, 'plain', ['mkdir', '/tmp/x'])).code, 0);
  await remove('localhost');
});

test('an AppArmor profile on a host without AppArmor: the pod fails at admission with reason AppArmor', { timeout: 60_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  if (appArmorHost) return t.skip('this host has AppArmor');
  await h!.api.create(PODS, podSpec(h!, 'apparmor', { containers: [box('c', { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } })] }));
  const refused = await pollUntil('apparmor Failed', async () => {
    const pod = await getPod(h!, 'apparmor');
    return pod.status?.phase === 'Failed' ? pod : undefined;
  }, { timeoutMs: 30_000 });
  assert.deepEqual([refused.status!.reason, refused.status!.message], ['AppArmor', 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host']);
  await remove('apparmor');
});
