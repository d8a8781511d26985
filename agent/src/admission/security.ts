/**
 * Admission of a pod's sysctls and AppArmor profiles (kubelet sysctl allowlist and AppArmor admit
 * handlers). A refused pod fails at once, before any sandbox:
 *
 *   sysctl in the safe set, or matching allowedUnsafeSysctls ─▶ admitted, unless it belongs to
 *                                                              a namespace the pod shares with the
 *                                                              node (net.* with hostNetwork, IPC
 *                                                              ones with hostIPC)
 *   anything else                                          ─▶ SysctlForbidden
 *   an AppArmor profile other than Unconfined on a host without AppArmor ─▶ AppArmor
 *   supplementalGroupsPolicy Strict (containerd 1.6 always merges the image's groups)
 *                                                          ─▶ SupplementalGroupsPolicyNotSupported
 */
import { readFileSync } from 'node:fs';
import { AgentError } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import { appArmorProblem } from '../runtime/security-context.js';
import { ADMIT, type PodAdmitHandler } from './admit.js';

/** Sysctls kubelet allows without configuration (namespaced and isolated from other pods). */
export const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
] as const;

export const SYSCTL_FORBIDDEN_REASON = 'SysctlForbidden';

type Namespace = 'ipc' | 'net';

/** The kernel namespace a sysctl lives in (kubelet sysctl namespace.go), or undefined: not namespaced. */
export function sysctlNamespace(name: string): Namespace | undefined {
  if (name === 'kernel.sem' || name.startsWith('kernel.shm') || name.startsWith('kernel.msg') || name.startsWith('fs.mqueue.')) return 'ipc';
  if (name.startsWith('net.')) return 'net';
  return undefined;
}

/** `a/b/c` and `a.b.c` name the same sysctl; kubelet compares the dotted form. */
function normalize(name: string): string {
  return name.includes('/') ? name.replaceAll('/', '.') : name;
}

/**
 * Checks the `allowedUnsafeSysctls` patterns (a name, or a prefix ending in `*`): each must be
 * namespaced, since a node-wide sysctl set for one pod would change every pod. Throws
 * ERR_INVALID_ARGUMENT naming the first bad pattern.
 */
export function validateUnsafeSysctls(patterns: readonly string[]): void {
  for (const p of patterns) {
    if (typeof p !== 'string' || !/^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\*|[./]\*)?$/.test(p)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: allowedUnsafeSysctls: ${JSON.stringify(p)} is not a sysctl name or a prefix ending in "*"`);
    }
    const name = normalize(p.endsWith('*') ? p.slice(0, -1) : p);
    if (!sysctlNamespace(name)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: allowedUnsafeSysctls: the sysctl ${JSON.stringify(p)} is not known to be namespaced`);
  }
}

/** Why sysctl `raw` may not be set in this pod, or undefined. */
function sysctlProblem(raw: string, allowed: readonly string[], hostNet: boolean, hostIPC: boolean): string | undefined {
  const name = normalize(raw);
  const match = allowed.some((p) => (p.endsWith('*') ? name.startsWith(normalize(p.slice(0, -1))) : name === normalize(p)));
  if (!match) return `"${name}" not allowlisted`;
  const ns = sysctlNamespace(name);
  if ((ns === 'net' && hostNet) || (ns === 'ipc' && hostIPC)) return `"${name}" not allowed with host ${ns} enabled`;
  return undefined;
}

/** Refuses pods setting sysctls outside the safe set and `allowedUnsafeSysctls` (validated at start). */
export function sysctlAdmitHandler(allowedUnsafe: readonly string[]): PodAdmitHandler {
  const allowed = [...SAFE_SYSCTLS, ...allowedUnsafe];
  return (pod: Pod) => {
    const spec = pod.spec;
    for (const s of spec?.securityContext?.sysctls ?? []) {
      const problem = sysctlProblem(s.name, allowed, spec?.hostNetwork === true, spec?.hostIPC === true);
      if (problem) return { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message: `forbidden sysctl: ${problem}` };
    }
    return ADMIT;
  };
}

/** Refuses pods asking for AppArmor profiles when the host has no AppArmor (`enabled` read once at start). */
export function appArmorAdmitHandler(enabled: boolean): PodAdmitHandler {
  return (pod: Pod) => {
    const problem = appArmorProblem(pod, enabled);
    return problem ? { admit: false, reason: 'AppArmor', message: problem } : ADMIT;
  };
}

/** Whether the host's kernel enforces AppArmor (what kubelet's validator reads), checked once at start. */
export function appArmorEnabled(path = '/sys/module/apparmor/parameters/enabled'): boolean {
  try {
    return readFileSync(path, 'utf8').trim().startsWith('Y');
  } catch {
    return false;
  }
}

/** Refuses `supplementalGroupsPolicy: Strict`: this node's runtime cannot leave out the image's groups. */
export const supplementalGroupsPolicyAdmitHandler: PodAdmitHandler = (pod: Pod) =>
  pod.spec?.securityContext?.supplementalGroupsPolicy === 'Strict'
    ? { admit: false, reason: 'SupplementalGroupsPolicyNotSupported', message: 'SupplementalGroupsPolicy=Strict is not supported in this node' }
    : ADMIT;
