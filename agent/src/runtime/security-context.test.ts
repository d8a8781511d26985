import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { buildContainerConfig, buildSandboxConfig } from './container-config.js';
import { appArmorProblem, containerSecurityContext, hasPrivilegedContainer, verifyRunAsNonRoot } from './security-context.js';

const paths = { rootDir: '/var/lib/nodelet', podLogsDir: '/var/log/pods' };
const podWith = (spec: Partial<NonNullable<Pod['spec']>>, containers: Container[] = [{ name: 'c', image: 'busybox' }]): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers, ...spec },
});
const cfg = (pod: Pod, imageUser = {}) =>
  buildContainerConfig({ pod, container: pod.spec!.containers[0]!, type: 'regular', restartCount: 0, imageRef: 'i', env: [], paths, nodeMemoryBytes: 0, imageUser }).linux!.securityContext!;

test('the sandbox is privileged when any container is, init and ephemeral ones included (containerd refuses otherwise)', () => {
  // Before: the sandbox config carried no privileged flag at all.
  const priv = podWith({}, [{ name: 'a' }, { name: 'b', securityContext: { privileged: true } }]);
  assert.equal(buildSandboxConfig(priv, 0, paths).linux!.securityContext!.privileged, true);
  assert.equal(hasPrivilegedContainer(podWith({ initContainers: [{ name: 'i', securityContext: { privileged: true } }] })), true);
  const eph = { ...podWith({}), spec: { ...podWith({}).spec!, ephemeralContainers: [{ name: 'd', securityContext: { privileged: true } }] } } as Pod;
  assert.equal(hasPrivilegedContainer(eph), true);
  assert.equal(buildSandboxConfig(podWith({}), 0, paths).linux!.securityContext!.privileged, false);
});

test('sandbox: pod user, group, fsGroup then supplementalGroups, seccomp (Unconfined by default, as kubelet without seccompDefault)', () => {
  const p = podWith({ securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000] } });
  const sc = buildSandboxConfig(p, 0, paths).linux!.securityContext!;
  assert.deepEqual(sc.runAsUser, { value: '1000' });
  assert.deepEqual(sc.runAsGroup, { value: '3000' });
  assert.deepEqual(sc.supplementalGroups, ['2000', '4000', '5000']);
  assert.deepEqual(sc.seccomp, { profileType: 'Unconfined' });
});

test('container: container fields override the pod, groups and seccomp/AppArmor profiles are passed', () => {
  const p = podWith({ securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, seccompProfile: { type: 'RuntimeDefault' } } }, [
    { name: 'c', securityContext: { runAsUser: 1001, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' }, appArmorProfile: { type: 'Unconfined' } } },
  ]);
  const sc = cfg(p);
  assert.deepEqual(sc.runAsUser, { value: '1001' });
  assert.deepEqual(sc.runAsGroup, { value: '3000' });
  assert.deepEqual(sc.supplementalGroups, ['2000']);
  assert.equal(sc.readonlyRootfs, true);
  assert.equal(sc.noNewPrivs, true);
  assert.deepEqual(sc.capabilities, { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] });
  assert.deepEqual(sc.seccomp, { profileType: 'Localhost', localhostRef: '/var/lib/nodelet/seccomp/profiles/audit.json' });
  assert.deepEqual(sc.apparmor, { profileType: 'Unconfined' });
  assert.deepEqual(cfg(podWith({ securityContext: { seLinuxOptions: { level: 's0:c1,c2' } } })).selinuxOptions, { level: 's0:c1,c2' });
  assert.ok(sc.maskedPaths!.includes('/proc/kcore') && sc.readonlyPaths!.includes('/proc/sys'));
  // The pod's seccomp when the container names none; Unconfined when neither does.
  assert.deepEqual(cfg(podWith({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } })).seccomp, { profileType: 'RuntimeDefault' });
  assert.deepEqual(cfg(podWith({})).seccomp, { profileType: 'Unconfined' });
  // kubelet's seccompDefault makes RuntimeDefault the default, for the sandbox too.
  const dflt = buildContainerConfig({ pod: podWith({}), container: { name: 'c' }, type: 'regular', restartCount: 0, imageRef: 'i', env: [], paths, nodeMemoryBytes: 0, imageUser: {}, seccompDefault: true });
  assert.deepEqual(dflt.linux!.securityContext!.seccomp, { profileType: 'RuntimeDefault' });
  assert.deepEqual(buildSandboxConfig(podWith({}), 0, paths, undefined, true).linux!.securityContext!.seccomp, { profileType: 'RuntimeDefault' });
  // A privileged container never gets no_new_privs.
  assert.equal(cfg(podWith({}, [{ name: 'c', securityContext: { privileged: true, allowPrivilegeEscalation: false } }])).noNewPrivs, false);
});

test('container: the image USER is the default user, numeric as runAsUser, else as a user name', () => {
  assert.deepEqual(cfg(podWith({}), { uid: 65534 }).runAsUser, { value: '65534' });
  const named = cfg(podWith({}), { username: 'nginx' });
  assert.equal(named.runAsUser, undefined);
  assert.equal(named.runAsUsername, 'nginx');
  assert.deepEqual(cfg(podWith({ securityContext: { runAsUser: 7 } }), { uid: 65534 }).runAsUser, { value: '7' });
});

test('runAsNonRoot: refused for a root image, runAsUser 0 and a non-numeric image user, kubelet messages', () => {
  const p = podWith({ securityContext: { runAsNonRoot: true } });
  const c = p.spec!.containers[0]!;
  const refused = (img: object, re: RegExp, pod = p) => assert.throws(() => verifyRunAsNonRoot(pod, pod.spec!.containers[0]!, img), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION') && re.test((e as Error).message));
  refused({}, /^container has runAsNonRoot and image will run as root \(pod: "p_ns\(u1\)", container: c\)$/);
  refused({ uid: 0 }, /image will run as root/);
  refused({ username: 'app' }, /image has non-numeric user \(app\), cannot verify user is non-root/);
  refused({ uid: 1000 }, /runAsUser breaks non-root policy/, podWith({ securityContext: { runAsNonRoot: true, runAsUser: 0 } }));
  verifyRunAsNonRoot(p, c, { uid: 1000 });
  verifyRunAsNonRoot(podWith({ securityContext: { runAsNonRoot: true, runAsUser: 1000 } }), c, {});
  // The config builder refuses too (the caller reports CreateContainerConfigError).
  assert.throws(() => cfg(p), /image will run as root/);
});

test('procMount Unmasked is refused (it needs a user namespace); AppArmor profiles are refused on a host without AppArmor', () => {
  assert.throws(() => containerSecurityContext(podWith({}), { name: 'c', securityContext: { procMount: 'Unmasked' } }, {}, { rootDir: '/r' }), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION'));
  assert.throws(() => cfg(podWith({ securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../../etc/x' } } })), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
  assert.equal(appArmorProblem(podWith({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }), false), 'Cannot enforce AppArmor: AppArmor is not enabled on the host');
  assert.equal(appArmorProblem(podWith({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }), true), undefined);
  assert.equal(appArmorProblem(podWith({}, [{ name: 'c', securityContext: { appArmorProfile: { type: 'Unconfined' } } }]), false), undefined);
});
