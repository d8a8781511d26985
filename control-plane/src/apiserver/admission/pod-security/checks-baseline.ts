/**
 * The baseline level's checks (upstream policy/check_*.go, the versions up to v1.32): no host
 * namespaces, privileged containers, extra capabilities, hostPath volumes, host ports,
 * Windows host processes, unsafe AppArmor, SELinux, /proc mount, seccomp or sysctls.
 */
import type { Json } from '../../object.js';
import {
  ALLOWED, allContainers, containersPhrase, forbid, goQuote, joinQuote, nameOf, objectField, pluralize, securityContextOf, setters, sortedSet,
  type Check, type CheckFn,
} from './check.js';

const containerSettings = (spec: Json): Array<{ name: string; sc: Json | undefined }> => allContainers(spec).map((c) => ({ name: nameOf(c), sc: securityContextOf(c) }));
const podSecurityContext = (spec: Json): Json | undefined => securityContextOf(spec);

const hostNamespaces: CheckFn = (_meta, spec) => {
  const used = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return used.length ? forbid('host namespaces', used.join(', ')) : ALLOWED;
};

const privileged: CheckFn = (_meta, spec) => {
  const bad = containerSettings(spec).filter((c) => c.sc?.privileged === true).map((c) => c.name);
  return bad.length ? forbid('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED;
};

/** The capabilities a container may add at baseline: the container runtime's default set. */
export const BASELINE_CAPABILITIES: ReadonlySet<string> = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);

const capabilitiesBaseline: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const added: string[] = [];
  for (const c of containerSettings(spec)) {
    const add = objectField(c.sc, 'capabilities')?.add;
    const extra = (Array.isArray(add) ? add : []).map(String).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    if (!extra.length) continue;
    bad.push(c.name);
    added.push(...extra);
  }
  return bad.length ? forbid('non-default capabilities', `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add`) : ALLOWED;
};

const hostPathVolumes: CheckFn = (_meta, spec) => {
  const volumes = (Array.isArray(spec.volumes) ? spec.volumes : []) as Json[];
  const bad = volumes.filter((v) => objectField(v, 'hostPath') !== undefined).map(nameOf);
  return bad.length ? forbid('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`) : ALLOWED;
};

const hostPorts: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of allContainers(spec)) {
    const used = (Array.isArray(c.ports) ? (c.ports as Json[]) : []).map((p) => p?.hostPort).filter((p) => typeof p === 'number' && p !== 0);
    if (!used.length) continue;
    bad.push(nameOf(c));
    ports.push(...used.map(String));
  }
  if (!bad.length) return ALLOWED;
  const distinct = sortedSet(ports);
  return forbid('hostPort', `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}`);
};

const windowsHostProcess: CheckFn = (_meta, spec) => {
  const isHostProcess = (sc: Json | undefined): boolean => objectField(sc, 'windowsOptions')?.hostProcess === true;
  const bad = containerSettings(spec).filter((c) => isHostProcess(c.sc)).map((c) => c.name);
  const who = setters(isHostProcess(podSecurityContext(spec)), bad);
  return who.length ? forbid('hostProcess', `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`) : ALLOWED;
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const allowedAppArmorType = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';
const allowedAppArmorAnnotation = (v: string): boolean => v === '' || v === 'runtime/default' || v.startsWith('localhost/');

const appArmorProfile: CheckFn = (meta, spec) => {
  const badValues: string[] = [];
  const profileOf = (sc: Json | undefined): Json | undefined => objectField(sc, 'appArmorProfile');
  const podProfile = profileOf(podSecurityContext(spec));
  const podBad = podProfile !== undefined && !allowedAppArmorType(podProfile.type);
  if (podBad) badValues.push(String(podProfile.type ?? ''));
  const bad: string[] = [];
  for (const c of containerSettings(spec)) {
    const p = profileOf(c.sc);
    if (p === undefined || allowedAppArmorType(p.type)) continue;
    bad.push(c.name);
    badValues.push(String(p.type ?? ''));
  }
  const who = setters(podBad, bad);
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !allowedAppArmorAnnotation(v))
    .map(([k, v]) => `${k}=${goQuote(v)}`)
    .sort();
  const values = [...sortedSet(badValues), ...annotations];
  if (annotations.length) who.push(pluralize('annotation', 'annotations', annotations.length));
  if (!who.length) return ALLOWED;
  return forbid(pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length), `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`);
};

const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

function seLinuxOptions(allowedTypes: readonly string[]): CheckFn {
  return (_meta, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (sc: Json | undefined): boolean => {
      const o = objectField(sc, 'seLinuxOptions');
      if (!o) return true;
      let ok = true;
      const type = typeof o.type === 'string' ? o.type : '';
      if (!allowedTypes.includes(type)) {
        ok = false;
        badTypes.push(type);
      }
      if (typeof o.user === 'string' && o.user !== '') {
        ok = false;
        setUser = true;
      }
      if (typeof o.role === 'string' && o.role !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podBad = !valid(podSecurityContext(spec));
    const bad = containerSettings(spec).filter((c) => !valid(c.sc)).map((c) => c.name);
    const who = setters(podBad, bad);
    if (!who.length) return ALLOWED;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return forbid('seLinuxOptions', `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`);
  };
}

const procMount: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containerSettings(spec)) {
    const pm = c.sc?.procMount;
    if (pm === undefined || pm === null || pm === 'Default') continue;
    bad.push(c.name);
    types.push(String(pm));
  }
  return bad.length ? forbid('procMount', `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`) : ALLOWED;
};

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccompAnnotation = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
/** A seccomp profile type the baseline and restricted levels accept. */
export const validSeccompType = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';

/** Before v1.19 seccomp was chosen by annotations. */
const seccompAnnotations: CheckFn = (meta, spec) => {
  const annotations = meta.annotations ?? {};
  const bad: string[] = [];
  const judge = (key: string): void => {
    const v = annotations[key];
    if (v !== undefined && !validSeccompAnnotation(v)) bad.push(`${key}=${goQuote(v)}`);
  };
  judge(SECCOMP_POD_ANNOTATION);
  for (const c of allContainers(spec)) judge(SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c));
  const forbidden = sortedSet(bad);
  return forbidden.length ? forbid('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', forbidden.length)} ${forbidden.join(', ')}`) : ALLOWED;
};

/** The seccomp profile type of a security context, when one is set. */
export const seccompTypeOf = (sc: Json | undefined): { set: boolean; type: string } => {
  const p = objectField(sc, 'seccompProfile');
  return { set: p !== undefined, type: typeof p?.type === 'string' ? p.type : '' };
};

const seccompBaseline: CheckFn = (_meta, spec) => {
  const values: string[] = [];
  const pod = seccompTypeOf(podSecurityContext(spec));
  const podBad = pod.set && !validSeccompType(pod.type);
  if (podBad) values.push(pod.type);
  const bad: string[] = [];
  for (const c of containerSettings(spec)) {
    const t = seccompTypeOf(c.sc);
    if (!t.set || validSeccompType(t.type)) continue;
    bad.push(c.name);
    values.push(t.type);
  }
  const who = setters(podBad, bad);
  return who.length ? forbid('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`) : ALLOWED;
};

const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctls(allowed: readonly string[]): CheckFn {
  const set = new Set(allowed);
  return (_meta, spec) => {
    const list = podSecurityContext(spec)?.sysctls;
    const names = (Array.isArray(list) ? (list as Json[]) : []).map((s) => (typeof s?.name === 'string' ? s.name : ''));
    const bad = names.filter((n) => !set.has(n));
    return bad.length ? forbid('forbidden sysctls', bad.join(', ')) : ALLOWED;
  };
}

const v = (minVersion: number, check: CheckFn): { minVersion: number; check: CheckFn } => ({ minVersion, check });

export const SECCOMP_BASELINE_ID = 'seccompProfile_baseline';
export const CAPABILITIES_BASELINE_ID = 'capabilities_baseline';
export const HOST_PATH_VOLUMES_ID = 'hostPathVolumes';

export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [v(0, appArmorProfile)] },
  { id: CAPABILITIES_BASELINE_ID, level: 'baseline', versions: [v(0, capabilitiesBaseline)] },
  { id: 'hostNamespaces', level: 'baseline', versions: [v(0, hostNamespaces)] },
  { id: HOST_PATH_VOLUMES_ID, level: 'baseline', versions: [v(0, hostPathVolumes)] },
  { id: 'hostPorts', level: 'baseline', versions: [v(0, hostPorts)] },
  { id: 'privileged', level: 'baseline', versions: [v(0, privileged)] },
  { id: 'procMount', level: 'baseline', versions: [v(0, procMount)] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [v(0, seLinuxOptions(SELINUX_TYPES_1_0)), v(31, seLinuxOptions(SELINUX_TYPES_1_31))] },
  { id: SECCOMP_BASELINE_ID, level: 'baseline', versions: [v(0, seccompAnnotations), v(19, seccompBaseline)] },
  { id: 'sysctls', level: 'baseline', versions: [v(0, sysctls(SYSCTLS_1_0)), v(27, sysctls(SYSCTLS_1_27)), v(29, sysctls(SYSCTLS_1_29)), v(32, sysctls(SYSCTLS_1_32))] },
  { id: 'windowsHostProcess', level: 'baseline', versions: [v(0, windowsHostProcess)] },
];
