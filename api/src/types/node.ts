/** core/v1 Node, as the agent reports it and the scheduler and node-lifecycle controller read it. */
import type { KubeObject, ObjectMeta, Time } from './meta.js';
import type { Quantity, TaintEffect } from './pod.js';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  timeAdded?: Time;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[];
}

export type NodeConditionType = 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable';

export interface NodeCondition {
  type: NodeConditionType | string;
  status: 'True' | 'False' | 'Unknown';
  lastHeartbeatTime?: Time;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export interface NodeAddress {
  type: 'Hostname' | 'InternalIP' | 'ExternalIP' | 'InternalDNS' | 'ExternalDNS';
  address: string;
}

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion?: string;
  operatingSystem: string;
  architecture: string;
}

export interface NodeDaemonEndpoints {
  kubeletEndpoint?: { Port: number };
}

export interface ContainerImage {
  names?: string[];
  sizeBytes?: number;
}

export interface NodeStatus {
  capacity?: Record<string, Quantity>;
  allocatable?: Record<string, Quantity>;
  phase?: string;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: NodeDaemonEndpoints;
  nodeInfo?: NodeSystemInfo;
  images?: ContainerImage[];
}

export interface Node extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Node';
  metadata: ObjectMeta;
  spec?: NodeSpec;
  status?: NodeStatus;
}
