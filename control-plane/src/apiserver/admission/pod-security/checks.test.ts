// Each Pod Security check, passing and failing, with upstream's messages (policy/check_*.go) and
// its version gates; the evaluator's order and overrides.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Json } from '../../object.js';
import { checksFor, evaluatePod, forbiddenDetail, forbiddenReason } from './evaluator.js';
import type { Level, PolicyVersion } from './policy.js';

const c = (name: string, extra: Json = {}): Json => ({ name, image: 'busybox:1.36', ...extra });
const sc = (name: string, securityContext: Json, extra: Json = {}): Json => c(name, { securityContext, ...extra });

/** A pod the restricted level accepts; `patch` changes its spec. */
const RESTRICTED_OK: Json = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [sc('app', { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })],
};

function judge(level: Level, spec: Json, o: { version?: PolicyVersion; annotations?: Record<string, string> } = {}): string {
  return forbiddenDetail(evaluatePod({ level, version: o.version ?? 'latest' }, o.annotations ? { annotations: o.annotations } : {}, spec));
}
const baseline = (spec: Json, o?: { version?: PolicyVersion; annotations?: Record<string, string> }): string => judge('baseline', spec, o);
const restricted = (spec: Json, o?: { version?: PolicyVersion; annotations?: Record<string, string> }): string => judge('restricted', { ...RESTRICTED_OK, ...spec }, o);

describe('baseline checks', () => {
  it('accept a plain pod; privileged accepts anything', () => {
    assert.equal(baseline({ containers: [c('a')] }), '');
    assert.equal(judge('privileged', { hostNetwork: true, containers: [sc('a', { privileged: true })] }), '');
  });

  it('host namespaces', () => {
    assert.equal(baseline({ hostNetwork: true, hostPID: true, hostIPC: true, containers: [c('a')] }), 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)');
    assert.equal(baseline({ hostNetwork: false, containers: [c('a')] }), '');
  });

  it('privileged, in init, regular and ephemeral containers', () => {
    const spec = { initContainers: [sc('i', { privileged: true })], containers: [sc('a', { privileged: true }), sc('b', { privileged: false })], ephemeralContainers: [sc('e', { privileged: true })] };
    assert.equal(baseline(spec), 'privileged (containers "i", "a", "e" must not set securityContext.privileged=true)');
    assert.equal(baseline({ containers: [sc('a', { privileged: true })] }), 'privileged (container "a" must not set securityContext.privileged=true)');
  });

  it('capabilities beyond the default set', () => {
    assert.equal(baseline({ containers: [sc('a', { capabilities: { add: ['CHOWN', 'NET_BIND_SERVICE', 'SYS_CHROOT'] } })] }), '');
    assert.equal(
      baseline({ containers: [sc('a', { capabilities: { add: ['NET_RAW', 'CHOWN'] } }), sc('b', { capabilities: { add: ['SYS_ADMIN', 'NET_RAW'] } })] }),
      'non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
  });

  it('hostPath volumes and host ports', () => {
    assert.equal(baseline({ volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }], containers: [c('a')] }), 'hostPath volumes (volume "h")');
    assert.equal(
      baseline({ containers: [c('a', { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 443, hostPort: 443 }] }), c('b', { ports: [{ containerPort: 80 }] })] }),
      'hostPort (container "a" uses hostPorts 443, 8080)',
    );
    assert.equal(baseline({ containers: [c('a', { ports: [{ containerPort: 80, hostPort: 0 }] })] }), '');
  });

  it('Windows hostProcess', () => {
    assert.equal(
      baseline({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [sc('a', { windowsOptions: { hostProcess: true } })] }),
      'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)',
    );
  });

  it('AppArmor: fields and the beta annotations', () => {
    assert.equal(baseline({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } }, containers: [sc('a', { appArmorProfile: { type: 'Localhost', localhostProfile: 'p' } })] }), '');
    assert.equal(
      baseline({ securityContext: { appArmorProfile: { type: 'Unconfined' } }, containers: [sc('a', { appArmorProfile: { type: 'Unconfined' } })] }),
      'forbidden AppArmor profile (pod and container "a" must not set AppArmor profile type to "Unconfined")',
    );
    const annotations = { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined', 'container.apparmor.security.beta.kubernetes.io/b': 'localhost/x' };
    assert.equal(
      baseline({ containers: [c('a'), c('b')] }, { annotations }),
      // Upstream quotes the whole `key="value"` pair again, inner quotes unescaped.
      'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/a="unconfined"")',
    );
  });

  it('SELinux: type by version, user and role never', () => {
    assert.equal(baseline({ securityContext: { seLinuxOptions: { type: 'container_t', level: 's0:c1' } }, containers: [c('a')] }), '');
    assert.equal(
      baseline({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } }, containers: [sc('a', { seLinuxOptions: { role: 'r' } })] }),
      'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
    );
    const engine = { securityContext: { seLinuxOptions: { type: 'container_engine_t' } }, containers: [c('a')] };
    assert.equal(baseline(engine, { version: 31 }), '');
    assert.equal(baseline(engine, { version: 30 }), 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "container_engine_t")');
  });

  it('/proc mount type', () => {
    assert.equal(baseline({ containers: [sc('a', { procMount: 'Default' })] }), '');
    assert.equal(baseline({ containers: [sc('a', { procMount: 'Unmasked' })] }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
  });

  it('seccomp: fields from v1.19, annotations before', () => {
    assert.equal(baseline({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [c('a')] }), '');
    assert.equal(
      baseline({ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [sc('a', { seccompProfile: { type: 'Unconfined' } })] }),
      'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    const annotations = { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/a': 'docker/default' };
    assert.equal(baseline({ containers: [c('a')] }, { annotations, version: 18 }), 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
    assert.equal(baseline({ containers: [c('a')] }, { annotations }), '', 'from v1.19 the annotations are not read');
  });

  it('sysctls: the safe set grows by version', () => {
    const spec = (name: string): Json => ({ securityContext: { sysctls: [{ name, value: '1' }] }, containers: [c('a')] });
    assert.equal(baseline(spec('net.ipv4.ip_unprivileged_port_start'), { version: 0 }), '');
    assert.equal(baseline(spec('net.ipv4.ip_local_reserved_ports'), { version: 26 }), 'forbidden sysctls (net.ipv4.ip_local_reserved_ports)');
    assert.equal(baseline(spec('net.ipv4.ip_local_reserved_ports'), { version: 27 }), '');
    assert.equal(baseline(spec('net.ipv4.tcp_keepalive_time'), { version: 28 }), 'forbidden sysctls (net.ipv4.tcp_keepalive_time)');
    assert.equal(baseline(spec('net.ipv4.tcp_keepalive_time'), { version: 29 }), '');
    assert.equal(baseline(spec('net.ipv4.tcp_rmem'), { version: 31 }), 'forbidden sysctls (net.ipv4.tcp_rmem)');
    assert.equal(baseline(spec('net.ipv4.tcp_rmem')), '');
    // v1.37 adds tcp_notsent_lowat upstream; this server's newest policy is its own v1.32.
    assert.equal(baseline(spec('net.ipv4.tcp_notsent_lowat'), { version: 37 }), 'forbidden sysctls (net.ipv4.tcp_notsent_lowat)');
    assert.equal(
      baseline({ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.core.somaxconn', value: '1' }] }, containers: [c('a')] }),
      'forbidden sysctls (kernel.msgmax, net.core.somaxconn)',
    );
  });

  it('lists every violation in check-ID order', () => {
    const v = evaluatePod({ level: 'baseline', version: 'latest' }, {}, { hostNetwork: true, volumes: [{ name: 'h', hostPath: { path: '/' } }], containers: [sc('a', { privileged: true })] });
    assert.equal(forbiddenReason(v), 'host namespaces, hostPath volumes, privileged');
  });
});

describe('restricted checks', () => {
  it('accept a pod that sets everything', () => {
    assert.equal(restricted({}), '');
  });

  it('the message for a plain pod', () => {
    assert.equal(
      judge('restricted', { containers: [c('x')] }),
      'allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('volume types (hostPath reported here, not by the baseline check)', () => {
    assert.equal(restricted({ volumes: [{ name: 'a', configMap: { name: 'c' } }, { name: 'b', projected: { sources: [] } }, { name: 'p', persistentVolumeClaim: { claimName: 'x' } }] }), '');
    assert.equal(
      restricted({ volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'n', nfs: { server: 's', path: '/' } }, { name: 'u' }] }),
      'restricted volume types (volumes "h", "n", "u" use restricted volume types "hostPath", "nfs", "unknown")',
    );
  });

  it('privilege escalation', () => {
    assert.equal(
      restricted({ containers: [sc('a', { capabilities: { drop: ['ALL'] } }), sc('b', { allowPrivilegeEscalation: true, capabilities: { drop: ['ALL'] } })] }),
      'allowPrivilegeEscalation != false (containers "a", "b" must set securityContext.allowPrivilegeEscalation=false)',
    );
  });

  it('runAsNonRoot: explicit false beats implicit', () => {
    const ok = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    assert.equal(
      restricted({ securityContext: { runAsNonRoot: false, seccompProfile: { type: 'RuntimeDefault' } }, containers: [sc('a', { ...ok, runAsNonRoot: false })] }),
      'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)',
    );
    assert.equal(restricted({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [sc('a', { ...ok, runAsNonRoot: true })] }), '');
  });

  it('runAsUser=0, from v1.23', () => {
    const spec = { securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } } };
    assert.equal(restricted(spec), 'runAsUser=0 (pod must not set runAsUser=0)');
    assert.equal(restricted(spec, { version: 22 }), '');
  });

  it('seccomp required, RuntimeDefault or Localhost', () => {
    const ok = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    assert.equal(restricted({ securityContext: { runAsNonRoot: true }, containers: [sc('a', { ...ok, seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } })] }), '');
    assert.equal(
      restricted({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Unconfined' } }, containers: [sc('a', ok)] }),
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    );
    assert.equal(
      restricted({ securityContext: { runAsNonRoot: true }, containers: [sc('a', ok)] }),
      'seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('capabilities: drop ALL, add only NET_BIND_SERVICE (from v1.22, replacing the baseline check)', () => {
    const spec = { containers: [sc('a', { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'CHOWN', 'SYS_ADMIN'] } })] };
    assert.equal(
      restricted(spec),
      'unrestricted capabilities (container "a" must not include "CHOWN", "SYS_ADMIN" in securityContext.capabilities.add)',
    );
    assert.equal(restricted(spec, { version: 21 }), 'non-default capabilities (container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add)');
    assert.equal(
      restricted({ containers: [sc('a', { allowPrivilegeEscalation: false, capabilities: { drop: ['NET_RAW'] } }), sc('b', { allowPrivilegeEscalation: false })] }),
      'unrestricted capabilities (containers "a", "b" must set securityContext.capabilities.drop=["ALL"])',
    );
  });

  it('Windows pods skip the Linux-only checks from v1.25', () => {
    const windows = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [c('a')] };
    assert.equal(judge('restricted', windows), '');
    assert.equal(
      judge('restricted', windows, { version: 24 }),
      'allowPrivilegeEscalation != false (container "a" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('restricted includes the baseline checks it does not replace; later versions read as the newest', () => {
    assert.equal(restricted({ hostNetwork: true }), 'host namespaces (hostNetwork=true)');
    assert.deepEqual(checksFor({ level: 'restricted', version: 99 }), checksFor({ level: 'restricted', version: 'latest' }));
    assert.equal(checksFor({ level: 'baseline', version: 'latest' }).length, 11);
    assert.equal(checksFor({ level: 'restricted', version: 'latest' }).length, 14);
  });
});
