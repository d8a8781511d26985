/**
 * Pure builders of the CRI `PodSandboxConfig` and `ContainerConfig` for a pod
 * (kubelet kuberuntime_sandbox.go generatePodSandboxConfig, kuberuntime_container.go
 * generateContainerConfig). Paths follow the kubelet's layout:
 *
 *   logs      /var/log/pods/<ns>_<name>_<uid>/<container>/<restartCount>.log
 *   volumes   <root-dir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<volume>
 *   subPaths  <root-dir>/pods/<uid>/volume-subpaths/<volume>/<container>/<index> (bind mounts, subpath.ts)
 *
 * The functions that join a pod UID or a volume name into a host path check it first and throw
 * ERR_INVALID_ARGUMENT: a name that is not a DNS-1123 label never becomes a path.
 */
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import { isDns1123Label, podQOSClass, type Container, type Pod, type QOSClass, type Volume } from '@nodelet/api/agent';
import { milliCpu, parseQuantity } from '../util/quantity.js';
import type { ContainerConfig, LinuxContainerResources, Mount, PodSandboxConfig, PortMapping } from '../kubecontainer/cri.js';
import type { EnvVarValue } from './env.js';
import { volumeKindOf } from './volume-kinds.js';
import { sandboxHostname } from './pod-hostname.js';
import { expandVars } from './env.js';
import { containerSecurityContext, sandboxSecurityContext, type ImageUser } from './security-context.js';
import {
  CONTAINER_HASH,
  CONTAINER_NAME,
  CONTAINER_RESTART_COUNT,
  CONTAINER_TYPE,
  MANAGED_BY,
  POD_NAME,
  POD_NAMESPACE,
  POD_TERMINATION_GRACE_PERIOD,
  POD_UID,
  containerHash,
  type ContainerType,
} from '../kubecontainer/labels.js';

export interface PodPaths {
  rootDir: string;
  podLogsDir: string;
}

export function podLogDir(pod: Pod, podLogsDir = '/var/log/pods'): string {
  return join(podLogsDir, `${pod.metadata.namespace}_${pod.metadata.name}_${pod.metadata.uid}`);
}

/** A pod UID that is safe as one path element (API server UIDs are UUIDs; static pods' too). */
export function isSafePodUid(uid: unknown): uid is string {
  return typeof uid === 'string' && /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(uid);
}

/** `<root-dir>/pods/<uid>`. Throws ERR_INVALID_ARGUMENT for a UID that is not one path element. */
export function podDir(rootDir: string, uid: string): string {
  if (!isSafePodUid(uid)) throw new AgentError('ERR_INVALID_ARGUMENT', `pod UID ${JSON.stringify(uid)} cannot name a directory`);
  return join(rootDir, 'pods', uid);
}

/**
 * Host directory of a volume that the agent materialises (emptyDir, configMap, secret, projected,
 * downwardAPI; for a persistentVolumeClaim the mount point its volume is bind-mounted on).
 * Throws ERR_INVALID_ARGUMENT for a volume name that is not a DNS-1123 label.
 */
export function volumeDir(rootDir: string, uid: string, volume: Volume): string | undefined {
  const plugin = volumeKindOf(volume)?.pluginDir;
  if (!plugin) return undefined;
  if (typeof volume.name !== 'string' || !isDns1123Label(volume.name)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `volume name ${JSON.stringify(volume.name)} is not a DNS-1123 label`);
  }
  return join(podDir(rootDir, uid), 'volumes', plugin, volume.name);
}

/**
 * Where a volume is on the node, as containers mount it: the node path its kind names (hostPath),
 * else its directory ({@link volumeDir}). Undefined for a source the node refuses.
 */
export function volumeHostPath(rootDir: string, uid: string, volume: Volume): string | undefined {
  return volumeKindOf(volume)?.nodePath?.(volume) ?? volumeDir(rootDir, uid, volume);
}

/** The kubelet's pod labels: the pod's own labels plus the io.kubernetes.pod.* ones. */
export function sandboxLabels(pod: Pod): Record<string, string> {
  return {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME]: pod.metadata.name ?? '',
    [POD_NAMESPACE]: pod.metadata.namespace ?? '',
    [POD_UID]: pod.metadata.uid ?? '',
    [MANAGED_BY]: 'true',
  };
}

/** hostPort mappings of every container (the runtime hands them to CNI `portmap`). */
export function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      out.push({ protocol: p.protocol ?? 'TCP', containerPort: p.containerPort, hostPort: p.hostPort, hostIp: p.hostIP ?? '' });
    }
  }
  return out;
}

/** The pod's PID namespace mode: the node's (hostPID), one for the pod (shareProcessNamespace), or one per container. */
function pidNamespace(spec: NonNullable<Pod['spec']>): 'NODE' | 'POD' | 'CONTAINER' {
  return spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER';
}

/**
 * The CRI sandbox config of a pod. A pod on the host network shares the node's UTS namespace
 * too, so its hostname stays empty as kubelet leaves it: runc refuses to set a hostname without
 * a private UTS namespace, and the runtime fills /etc/hostname from the node's own name.
 */
export function buildSandboxConfig(pod: Pod, attempt: number, paths: PodPaths, dnsConfig?: PodSandboxConfig['dnsConfig'], seccompDefault = false, cgroupParent?: string, clusterDomain = 'cluster.local'): PodSandboxConfig {
  const spec = pod.spec!;
  const hostname = spec.hostNetwork ? '' : sandboxHostname(pod, clusterDomain);
  const config: PodSandboxConfig = {
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid, attempt },
    hostname,
    logDirectory: podLogDir(pod, paths.podLogsDir),
    portMappings: portMappings(pod),
    labels: sandboxLabels(pod),
    annotations: { ...(pod.metadata.annotations ?? {}) },
    linux: {
      // Privileged when any container is (security-context.ts), with the pod's user, groups and seccomp.
      securityContext: {
        ...sandboxSecurityContext(pod, paths.rootDir, seccompDefault),
        namespaceOptions: {
          network: spec.hostNetwork ? 'NODE' : 'POD',
          pid: pidNamespace(spec),
          ipc: spec.hostIPC ? 'NODE' : 'POD',
        },
      },
      sysctls: Object.fromEntries((spec.securityContext?.sysctls ?? []).map((s) => [s.name, s.value])),
      // The pod cgroup (cm/pod-cgroups.ts): the runtime makes every container's cgroup beneath it.
      ...(cgroupParent ? { cgroupParent } : {}),
    },
  };
  // The pod's resolv.conf by the kubelet's dnsPolicy rules (agent/src/dns/pod-dns-config.ts).
  if (dnsConfig) config.dnsConfig = dnsConfig;
  return config;
}

/**
 * requests/limits → CRI linux resources (kubelet MilliCPUToShares / MilliCPUToQuota). The OOM score
 * follows the pod's QoS class (`qos`; a pod of this one container when not given), as kubelet's does.
 */
export function linuxResources(c: Container, nodeMemoryBytes: number, qos: QOSClass = podQOSClass({ containers: [c] })): LinuxContainerResources {
  const PERIOD = 100_000;
  const lim = c.resources?.limits ?? {};
  const req = c.resources?.requests ?? {};
  const cpuReq = req.cpu ?? lim.cpu;
  const memReq = req.memory ?? lim.memory;
  const out: LinuxContainerResources = {
    cpuShares: String(cpuReq === undefined ? 2 : Math.max(2, Math.floor((milliCpu(cpuReq) * 1024) / 1000))),
  };
  if (lim.cpu !== undefined) {
    out.cpuPeriod = String(PERIOD);
    out.cpuQuota = String(Math.max(1000, Math.floor((milliCpu(lim.cpu) * PERIOD) / 1000)));
  }
  if (lim.memory !== undefined) out.memoryLimitInBytes = String(Math.floor(parseQuantity(lim.memory)));
  // QoS-based OOM score (kubelet qos/policy.go); containerd clamps it with restrict_oom_score_adj.
  // Burstable: by the container's memory request, kept within [2, 999] (none asked: 999).
  let oom = 1000;
  if (qos === 'Guaranteed') oom = -997;
  else if (qos === 'Burstable') {
    const share = memReq !== undefined && nodeMemoryBytes > 0 ? Math.floor((1000 * parseQuantity(memReq)) / nodeMemoryBytes) : 0;
    oom = Math.min(999, Math.max(2, 1000 - share));
  }
  out.oomScoreAdj = String(oom);
  return out;
}

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  type: ContainerType;
  restartCount: number;
  /** Image reference to run (the image ID the image manager resolved). */
  imageRef: string;
  env: EnvVarValue[];
  paths: PodPaths;
  nodeMemoryBytes: number;
  /** Host path per volumeMount index with a subPath/subPathExpr, verified and bind-mounted (subpath.ts). */
  subPaths?: ReadonlyMap<number, string>;
  /** The image's USER (CRI ImageStatus): runAsUser's default and what runAsNonRoot checks; none is root. */
  imageUser: ImageUser;
  /** kubelet `seccompDefault`: RuntimeDefault when neither the container nor the pod names a profile. */
  seccompDefault?: boolean;
  /** An ephemeral container's running target (targetContainerName): its process namespace is joined. */
  targetContainerId?: string;
}

function mountsFor({ pod, container, paths, subPaths }: ContainerConfigInput): Mount[] {
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  const out: Mount[] = [];
  (container.volumeMounts ?? []).forEach((vm, i) => {
    const v = volumes.get(vm.name);
    if (!v) return;
    let host = volumeHostPath(paths.rootDir, pod.metadata.uid!, v);
    // Only a volume the node refuses has no host path, and such a pod never gets this far (volumes.ts).
    if (!host) throw new AgentError('ERR_FAILED_PRECONDITION', `volume "${v.name}" of volumeMount "${vm.name}" cannot be provided on this node`);
    if (vm.subPath || vm.subPathExpr) {
      // Never join a subPath here: only a path prepareSubPath verified and bind-mounted is used.
      host = subPaths?.get(i);
      if (!host) throw new AgentError('ERR_FAILED_PRECONDITION', `subPath of volumeMount "${vm.name}" of container "${container.name}" was not prepared`);
    }
    out.push({
      containerPath: vm.mountPath,
      hostPath: host,
      // The agent-written kinds are read-only whatever the pod asks (CVE-2017-1002102; volume-kinds.ts).
      readonly: vm.readOnly === true || volumeKindOf(v)?.readOnly(v) === true,
      propagation: vm.mountPropagation === 'Bidirectional' ? 'PROPAGATION_BIDIRECTIONAL' : vm.mountPropagation === 'HostToContainer' ? 'PROPAGATION_HOST_TO_CONTAINER' : 'PROPAGATION_PRIVATE',
    });
  });
  return out;
}

/**
 * The CRI config of one container. Throws ERR_FAILED_PRECONDITION when it must not start as asked
 * (runAsNonRoot with a root image, an unprepared subPath): the caller reports CreateContainerConfigError.
 */
export function buildContainerConfig(input: ContainerConfigInput): ContainerConfig {
  const { pod, container: c, restartCount, type } = input;
  const vars = new Map(input.env.map((e) => [e.key, e.value]));
  const spec = pod.spec!;
  const securityContext = containerSecurityContext(pod, c, input.imageUser, { rootDir: input.paths.rootDir, seccompDefault: input.seccompDefault ?? false });
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: { image: input.imageRef, userSpecifiedImage: c.image },
    command: (c.command ?? []).map((s) => expandVars(s, vars)),
    args: (c.args ?? []).map((s) => expandVars(s, vars)),
    workingDir: c.workingDir ?? '',
    envs: input.env,
    mounts: mountsFor(input),
    labels: {
      [POD_NAME]: pod.metadata.name ?? '',
      [POD_NAMESPACE]: pod.metadata.namespace ?? '',
      [POD_UID]: pod.metadata.uid ?? '',
      [CONTAINER_NAME]: c.name,
      [MANAGED_BY]: 'true',
    },
    annotations: {
      [CONTAINER_HASH]: containerHash(c),
      [CONTAINER_RESTART_COUNT]: String(restartCount),
      [CONTAINER_TYPE]: type,
      [POD_TERMINATION_GRACE_PERIOD]: String(spec.terminationGracePeriodSeconds ?? 30),
    },
    logPath: join(c.name, `${restartCount}.log`),
    stdin: c.stdin ?? false,
    stdinOnce: c.stdinOnce ?? false,
    tty: c.tty ?? false,
    linux: {
      resources: linuxResources(c, input.nodeMemoryBytes, podQOSClass(input.pod.spec)),
      securityContext: {
        ...securityContext,
        namespaceOptions: {
          network: spec.hostNetwork ? 'NODE' : 'POD',
          ...containerPid(spec, input.targetContainerId),
          ipc: spec.hostIPC ? 'NODE' : 'POD',
        },
      },
    },
  };
}

/**
 * A container's PID namespace: the pod's mode, except that an ephemeral container with a target
 * joins the target's own namespace (CRI TARGET, containerd 1.6 supports it) when the pod gives each
 * container its own; with hostPID or shareProcessNamespace it already sees the target's processes.
 */
function containerPid(spec: NonNullable<Pod['spec']>, targetId: string | undefined): { pid: 'NODE' | 'POD' | 'CONTAINER' | 'TARGET'; targetId?: string } {
  const pid = pidNamespace(spec);
  return pid === 'CONTAINER' && targetId ? { pid: 'TARGET', targetId } : { pid };
}
