/** coordination.k8s.io/v1 Lease, discovery.k8s.io/v1 EndpointSlice. */
import type { KubeObject, Time } from './meta.js';
import type { ObjectReference } from './core.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** MicroTime: RFC 3339 with microseconds, e.g. `2026-01-01T00:00:00.000000Z`. */
  acquireTime?: Time;
  renewTime?: Time;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  apiVersion?: 'coordination.k8s.io/v1';
  kind?: 'Lease';
  spec?: LeaseSpec;
}

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  nodeName?: string;
  zone?: string;
}

export interface EndpointSlicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  apiVersion?: 'discovery.k8s.io/v1';
  kind?: 'EndpointSlice';
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: Endpoint[];
  ports?: EndpointSlicePort[];
}
