/**
 * A pod's and its containers' securityContext → the CRI security contexts (kubelet
 * kuberuntime security_context.go, security_context_others.go, helpers.go):
 *
 *   container field set?  ─yes─▶ used
 *        │ no
 *        ▼
 *   pod field set?        ─yes─▶ used          (runAsUser, runAsGroup, runAsNonRoot, seccomp, AppArmor)
 *        │ no
 *        ▼
 *   the image's USER (runAsUser only), else the runtime's default
 *
 * The sandbox is privileged when any container of the pod is (containerd refuses a privileged
 * container in an unprivileged sandbox). Seccomp defaults to Unconfined, kubelet's default without
 * `seccompDefault`. Pure functions: no I/O (the AppArmor host check is passed in).
 */
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import type { Container, Pod, SecurityContext, SecurityProfile } from '@nodelet/api/agent';
import type { ContainerConfig, PodSandboxConfig } from '../kubecontainer/cri.js';

type LinuxContainerSecurityContext = NonNullable<NonNullable<ContainerConfig['linux']>['securityContext']>;
type LinuxSandboxSecurityContext = NonNullable<NonNullable<PodSandboxConfig['linux']>['securityContext']>;
type CriSecurityProfile = NonNullable<LinuxContainerSecurityContext['seccomp']>;

/** The user an image runs as (CRI ImageStatus `uid`/`username`): a numeric uid, a name, or neither (root). */
export interface ImageUser {
  uid?: number;
  username?: string;
}

/** /proc paths masked with procMount Default (kubelet securitycontext defaultMaskedPaths). */
const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
/** /proc paths read-only with procMount Default (kubelet securitycontext defaultReadonlyPaths). */
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

function ephemeralContainers(pod: Pod): Array<Pick<Container, 'securityContext'>> {
  // The typed PodSpec does not carry ephemeral containers; a pod from the API server may.
  return (pod.spec as { ephemeralContainers?: Array<Pick<Container, 'securityContext'>> } | undefined)?.ephemeralContainers ?? [];
}

/** Whether any container of the pod (init, regular, ephemeral) is privileged (kubelet HasPrivilegedContainer). */
export function hasPrivilegedContainer(pod: Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...ephemeralContainers(pod)];
  return all.some((c) => c.securityContext?.privileged === true);
}

/** fsGroup first, then supplementalGroups: the extra groups of every process of the pod. */
export function podSupplementalGroups(pod: Pod): string[] {
  const sc = pod.spec?.securityContext;
  const groups: number[] = [];
  if (sc?.fsGroup !== undefined) groups.push(sc.fsGroup);
  groups.push(...(sc?.supplementalGroups ?? []));
  return groups.map(String);
}

/**
 * The CRI profile of a seccomp or AppArmor field. Seccomp's Localhost profile is a file under
 * `<root-dir>/seccomp`; AppArmor's is the name of a profile loaded on the node.
 */
function toCriProfile(p: SecurityProfile, localhostRoot: string | undefined, field: string): CriSecurityProfile {
  if (p.type === 'Localhost') {
    const ref = p.localhostProfile ?? '';
    if (!ref) throw new AgentError('ERR_INVALID_ARGUMENT', `${field}.localhostProfile must be set for type Localhost`);
    if (localhostRoot === undefined) return { profileType: 'Localhost', localhostRef: ref };
    // The profile must stay under the seccomp directory (the API server validates it; a static pod did not pass it).
    if (ref.startsWith('/') || ref.split('/').includes('..')) throw new AgentError('ERR_INVALID_ARGUMENT', `${field}.localhostProfile ${JSON.stringify(ref)} must be a relative path without ".."`);
    return { profileType: 'Localhost', localhostRef: join(localhostRoot, ref) };
  }
  return { profileType: p.type };
}

/** The seccomp profile of a container (or, without one, the sandbox): container, then pod, then the node default. */
export function seccompProfile(pod: Pod, c: Container | undefined, rootDir: string, seccompDefault = false): CriSecurityProfile {
  const p = c?.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile;
  if (!p) return { profileType: seccompDefault ? 'RuntimeDefault' : 'Unconfined' };
  return toCriProfile(p, join(rootDir, 'seccomp'), 'seccompProfile');
}

/** The AppArmor profile asked for (container, then pod), or undefined: the runtime's default. */
export function appArmorProfile(pod: Pod, c: Container | undefined): SecurityProfile | undefined {
  return c?.securityContext?.appArmorProfile ?? pod.spec?.securityContext?.appArmorProfile;
}

/** The pod-level part of the sandbox's security context (namespaces are set by the caller). */
export function sandboxSecurityContext(pod: Pod, rootDir: string, seccompDefault = false): Omit<LinuxSandboxSecurityContext, 'namespaceOptions'> {
  const sc = pod.spec?.securityContext;
  const out: Omit<LinuxSandboxSecurityContext, 'namespaceOptions'> = {
    privileged: hasPrivilegedContainer(pod),
    seccomp: seccompProfile(pod, undefined, rootDir, seccompDefault),
    supplementalGroups: podSupplementalGroups(pod),
  };
  if (sc?.runAsUser !== undefined) out.runAsUser = { value: String(sc.runAsUser) };
  if (sc?.runAsGroup !== undefined) out.runAsGroup = { value: String(sc.runAsGroup) };
  if (sc?.seLinuxOptions) out.selinuxOptions = { ...sc.seLinuxOptions };
  return out;
}

/** Container fields over pod fields, for those both carry. */
function effective(pod: Pod, c: Container): SecurityContext {
  const p = pod.spec?.securityContext;
  const sc = c.securityContext ?? {};
  const out: SecurityContext = { ...sc };
  if (out.runAsUser === undefined && p?.runAsUser !== undefined) out.runAsUser = p.runAsUser;
  if (out.runAsGroup === undefined && p?.runAsGroup !== undefined) out.runAsGroup = p.runAsGroup;
  if (out.runAsNonRoot === undefined && p?.runAsNonRoot !== undefined) out.runAsNonRoot = p.runAsNonRoot;
  if (out.seLinuxOptions === undefined && p?.seLinuxOptions !== undefined) out.seLinuxOptions = p.seLinuxOptions;
  return out;
}

/** `name_namespace(uid)`, how kubelet names a pod in messages. */
function podRef(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;
}

/**
 * kubelet verifyRunAsNonRoot: with runAsNonRoot, a container that would run as UID 0 (asked for,
 * or the image's user, an image without USER being root) or as a user name that cannot be
 * checked is refused (the caller reports CreateContainerConfigError).
 */
export function verifyRunAsNonRoot(pod: Pod, c: Container, image: ImageUser): void {
  const sc = effective(pod, c);
  if (sc.runAsNonRoot !== true) return;
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0) throw new AgentError('ERR_FAILED_PRECONDITION', `container's runAsUser breaks non-root policy (pod: "${podRef(pod)}", container: ${c.name})`);
    return;
  }
  if (image.uid === undefined && image.username) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root (pod: "${podRef(pod)}", container: ${c.name})`);
  }
  if ((image.uid ?? 0) === 0) throw new AgentError('ERR_FAILED_PRECONDITION', `container has runAsNonRoot and image will run as root (pod: "${podRef(pod)}", container: ${c.name})`);
}

export interface ContainerSecurityOptions {
  rootDir: string;
  seccompDefault?: boolean;
}

/**
 * Why this node cannot run the pod's AppArmor profiles (kubelet's AppArmor admission): any profile
 * other than Unconfined needs AppArmor enabled on the host. Undefined: nothing to refuse.
 */
export function appArmorProblem(pod: Pod, hostEnabled: boolean): string | undefined {
  if (hostEnabled) return undefined;
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const asks = [pod.spec?.securityContext?.appArmorProfile, ...all.map((c) => c.securityContext?.appArmorProfile)].some((p) => p && p.type !== 'Unconfined');
  return asks ? 'Cannot enforce AppArmor: AppArmor is not enabled on the host' : undefined;
}

/**
 * The container's CRI security context (kubelet determineEffectiveSecurityContext). Namespace
 * options are set by the caller. Throws ERR_FAILED_PRECONDITION for runAsNonRoot violations and
 * procMount Unmasked, ERR_INVALID_ARGUMENT for a bad Localhost profile.
 */
export function containerSecurityContext(pod: Pod, c: Container, image: ImageUser, o: ContainerSecurityOptions): Omit<LinuxContainerSecurityContext, 'namespaceOptions'> {
  verifyRunAsNonRoot(pod, c, image);
  const sc = effective(pod, c);
  // Upstream allows Unmasked only with a user namespace (hostUsers: false), which containerd 1.6 cannot make.
  if (sc.procMount === 'Unmasked') throw new AgentError('ERR_FAILED_PRECONDITION', `container ${c.name}: procMount Unmasked needs a user namespace (hostUsers: false), which this node's runtime cannot create`);
  const privileged = sc.privileged === true;
  const out: Omit<LinuxContainerSecurityContext, 'namespaceOptions'> = {
    privileged,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    // no_new_privs only when escalation is forbidden explicitly and the container is not privileged.
    noNewPrivs: !privileged && sc.allowPrivilegeEscalation === false,
    supplementalGroups: podSupplementalGroups(pod),
    seccomp: seccompProfile(pod, c, o.rootDir, o.seccompDefault),
    maskedPaths: DEFAULT_MASKED_PATHS,
    readonlyPaths: DEFAULT_READONLY_PATHS,
  };
  if (sc.runAsUser !== undefined) out.runAsUser = { value: String(sc.runAsUser) };
  else if (image.uid !== undefined) out.runAsUser = { value: String(image.uid) };
  else if (image.username) out.runAsUsername = image.username;
  if (sc.runAsGroup !== undefined) out.runAsGroup = { value: String(sc.runAsGroup) };
  // Labels for the runtime; on a host without SELinux the runtime leaves them unused, as with kubelet.
  if (sc.seLinuxOptions) out.selinuxOptions = { ...sc.seLinuxOptions };
  if (sc.capabilities) out.capabilities = { addCapabilities: sc.capabilities.add ?? [], dropCapabilities: sc.capabilities.drop ?? [] };
  // The node's admission refused pods asking for AppArmor where the host has none (admission/security.ts).
  const aa = appArmorProfile(pod, c);
  if (aa) out.apparmor = toCriProfile(aa, undefined, 'appArmorProfile');
  return out;
}
