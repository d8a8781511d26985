/**
 * The Node object's status, computed from machine facts, runtime health and configuration
 * (kubelet nodestatus/setters.go). Pure; the reporter (node-reporter.ts) does the I/O.
 *
 * allocatable = capacity − systemReserved − kubeReserved − hard eviction threshold (memory,
 * ephemeral-storage), never below zero. MemoryPressure, DiskPressure and PIDPressure are the eviction
 * manager's (eviction/eviction-manager.ts: thresholds, grace and transition periods). Ready is False with a reason when the node is shutting
 * down, the runtime or its network is not ready (CRI Status), the CNI service is not ready, or the
 * PLEG is unhealthy. `images` (node-images.ts) is reported when there is any, as kubelet leaves an
 * empty list out.
 */
import type { ContainerImage, NodeCondition, NodeStatus } from '@nodelet/api/agent';
import { formatBytes, parseQuantity } from '../util/quantity.js';
import type { MachineInfo } from './machine-info.js';

export interface RuntimeHealth {
  runtimeReady: boolean;
  runtimeMessage?: string;
  networkReady: boolean;
  networkMessage?: string;
  cniReady: boolean;
  cniMessage?: string;
  plegHealthy: boolean;
  /** A node shutdown is in progress (nodeshutdown/): Ready is False until it is cancelled. */
  shuttingDown?: boolean;
  runtimeName: string;
  runtimeVersion: string;
}

export interface NodeStatusInput {
  machine: MachineInfo;
  /** The pressure conditions that are True, as the eviction manager decides them (eviction/). */
  pressure: ReadonlySet<string>;
  health: RuntimeHealth;
  internalIP: string;
  maxPods: number;
  systemReserved: Record<string, number>;
  kubeReserved: Record<string, number>;
  evictionHard: Record<string, string>;
  port: number;
  agentVersion: string;
  /** status.images, already sorted and capped (nodeStatusImages). */
  images?: ContainerImage[];
  previous?: NodeStatus;
  now: number;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A threshold like "100Mi" or "10%" in bytes of `capacity`. */
export function thresholdBytes(t: string | undefined, capacity: number): number {
  if (!t) return 0;
  if (t.endsWith('%')) return (Number(t.slice(0, -1)) / 100) * capacity;
  return parseQuantity(t);
}

function milli(cores: number): string {
  return Number.isInteger(cores) ? String(cores) : `${Math.round(cores * 1000)}m`;
}

function cond(prev: NodeStatus | undefined, type: string, status: boolean, reason: string, message: string, now: number): NodeCondition {
  const s = status ? 'True' : 'False';
  const old = prev?.conditions?.find((c) => c.type === type);
  return {
    type,
    status: s,
    lastHeartbeatTime: iso(now),
    lastTransitionTime: old && old.status === s && old.lastTransitionTime ? old.lastTransitionTime : iso(now),
    reason,
    message,
  };
}

export function readyReason(h: RuntimeHealth): string | undefined {
  if (h.shuttingDown) return 'node is shutting down';
  if (!h.runtimeReady) return `container runtime is down: ${h.runtimeMessage ?? 'RuntimeReady=false'}`;
  if (!h.networkReady) return `container runtime network not ready: NetworkReady=false ${h.networkMessage ?? ''}`.trim();
  if (!h.cniReady) return `network plugin not ready: ${h.cniMessage ?? 'CNI service not ready'}`;
  if (!h.plegHealthy) return 'PLEG is not healthy: pleg has yet to be successful';
  return undefined;
}

export function computeNodeStatus(i: NodeStatusInput): NodeStatus {
  const m = i.machine;
  const reserved = (k: string): number => (i.systemReserved[k] ?? 0) + (i.kubeReserved[k] ?? 0);
  const memEvict = thresholdBytes(i.evictionHard['memory.available'], m.memoryBytes);
  const fsEvict = thresholdBytes(i.evictionHard['nodefs.available'], m.ephemeralStorageBytes);
  const allocCpu = Math.max(0, m.cpuCores - reserved('cpu'));
  const allocMem = Math.max(0, m.memoryBytes - reserved('memory') - memEvict);
  const allocFs = Math.max(0, m.ephemeralStorageBytes - reserved('ephemeral-storage') - fsEvict);
  const notReady = readyReason(i.health);
  const memPressure = i.pressure.has('MemoryPressure');
  const diskPressure = i.pressure.has('DiskPressure');
  const pidPressure = i.pressure.has('PIDPressure');
  const prev = i.previous;
  return {
    capacity: {
      cpu: String(m.cpuCores),
      memory: formatBytes(m.memoryBytes),
      'ephemeral-storage': formatBytes(m.ephemeralStorageBytes),
      pods: String(i.maxPods),
    },
    allocatable: {
      cpu: milli(allocCpu),
      memory: formatBytes(allocMem),
      'ephemeral-storage': formatBytes(allocFs),
      pods: String(i.maxPods),
    },
    conditions: [
      cond(prev, 'MemoryPressure', memPressure, memPressure ? 'KubeletHasInsufficientMemory' : 'KubeletHasSufficientMemory', memPressure ? 'kubelet has insufficient memory available' : 'kubelet has sufficient memory available', i.now),
      cond(prev, 'DiskPressure', diskPressure, diskPressure ? 'KubeletHasDiskPressure' : 'KubeletHasNoDiskPressure', diskPressure ? 'kubelet has disk pressure' : 'kubelet has no disk pressure', i.now),
      cond(prev, 'PIDPressure', pidPressure, pidPressure ? 'KubeletHasInsufficientPID' : 'KubeletHasSufficientPID', pidPressure ? 'kubelet has insufficient PID available' : 'kubelet has sufficient PID available', i.now),
      cond(prev, 'Ready', !notReady, notReady ? 'KubeletNotReady' : 'KubeletReady', notReady ?? 'kubelet is posting ready status', i.now),
    ],
    addresses: [
      { type: 'InternalIP', address: i.internalIP },
      { type: 'Hostname', address: m.hostname },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: i.port } },
    nodeInfo: {
      machineID: m.machineID,
      systemUUID: m.systemUUID,
      bootID: m.bootID,
      kernelVersion: m.kernelVersion,
      osImage: m.osImage,
      containerRuntimeVersion: `${i.health.runtimeName}://${i.health.runtimeVersion}`,
      kubeletVersion: i.agentVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: m.architecture,
    },
    ...(i.images?.length ? { images: i.images } : {}),
  };
}
