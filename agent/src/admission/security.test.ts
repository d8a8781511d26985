import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { appArmorAdmitHandler, supplementalGroupsPolicyAdmitHandler, sysctlAdmitHandler, validateUnsafeSysctls } from './security.js';

const pod = (sysctls: Array<{ name: string; value: string }>, extra: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: { containers: [{ name: 'c' }], securityContext: { sysctls }, ...extra },
});

test('sysctls: the safe set is admitted, others are SysctlForbidden unless allowed by name or prefix', () => {
  const admit = sysctlAdmitHandler([]);
  assert.deepEqual(admit(pod([{ name: 'net.ipv4.ip_local_port_range', value: '1 2' }, { name: 'kernel/shm_rmid_forced', value: '1' }]), []), { admit: true });
  assert.deepEqual(admit(pod([{ name: 'kernel.msgmax', value: '1' }]), []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
  const allowing = sysctlAdmitHandler(['kernel.msg*', 'net.core.somaxconn']);
  assert.equal(allowing(pod([{ name: 'kernel.msgmax', value: '1' }, { name: 'net.core.somaxconn', value: '1' }]), []).admit, true);
  assert.equal(allowing(pod([{ name: 'net.core.rmem_max', value: '1' }]), []).admit, false);
});

test('sysctls: a net sysctl with hostNetwork, an IPC one with hostIPC, are refused', () => {
  const admit = sysctlAdmitHandler(['kernel.msgmax']);
  assert.deepEqual(admit(pod([{ name: 'net.ipv4.tcp_syncookies', value: '1' }], { hostNetwork: true }), []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled' });
  assert.deepEqual(admit(pod([{ name: 'kernel.msgmax', value: '1' }], { hostIPC: true }), []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowed with host ipc enabled' });
});

test('allowedUnsafeSysctls: only namespaced names or prefixes', () => {
  validateUnsafeSysctls(['kernel.msg*', 'net.*', 'fs.mqueue.*', 'kernel.sem']);
  assert.throws(() => validateUnsafeSysctls(['vm.swappiness']), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /not known to be namespaced/.test((e as Error).message));
  assert.throws(() => validateUnsafeSysctls(['net.*.x']), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
});

test('AppArmor: a profile other than Unconfined is refused on a host without AppArmor', () => {
  const p: Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } } }] } };
  assert.deepEqual(appArmorAdmitHandler(false)(p, []), { admit: false, reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' });
  assert.deepEqual(appArmorAdmitHandler(true)(p, []), { admit: true });
});

test('supplementalGroupsPolicy Strict is refused (the runtime always merges the image groups); Merge is admitted', () => {
  const p = (policy: 'Merge' | 'Strict'): Pod => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }], securityContext: { supplementalGroupsPolicy: policy } } });
  assert.deepEqual(supplementalGroupsPolicyAdmitHandler(p('Strict'), []), { admit: false, reason: 'SupplementalGroupsPolicyNotSupported', message: 'SupplementalGroupsPolicy=Strict is not supported in this node' });
  assert.deepEqual(supplementalGroupsPolicyAdmitHandler(p('Merge'), []), { admit: true });
});
