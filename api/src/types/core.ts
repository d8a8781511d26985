/** The smaller core/v1 kinds: Namespace, ConfigMap, Secret, Service, Endpoints, ServiceAccount, Event, Binding. */
import type { KubeObject, Time } from './meta.js';

export interface Namespace extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Namespace';
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating' };
}

export interface ConfigMap extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'ConfigMap';
  data?: Record<string, string>;
  /** Values are base64. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

export interface Secret extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Secret';
  type?: string;
  /** Values are base64. */
  data?: Record<string, string>;
  /** Write-only convenience: merged into data by the server. */
  stringData?: Record<string, string>;
  immutable?: boolean;
}

export interface ServicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface ServiceSpec {
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  selector?: Record<string, string>;
  ports?: ServicePort[];
  clusterIP?: string;
  clusterIPs?: string[];
  externalName?: string;
  sessionAffinity?: 'None' | 'ClientIP';
  ipFamilies?: Array<'IPv4' | 'IPv6'>;
  ipFamilyPolicy?: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
  publishNotReadyAddresses?: boolean;
  /** `ClientIP` affinity's window; the API server defaults timeoutSeconds to 10800 (3 h). */
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  externalIPs?: string[];
  /** Deprecated upstream; refused by this API server (no implementation honours a requested address). */
  loadBalancerIP?: string;
  /** CIDRs allowed to reach the load balancer addresses (kube-proxy filters, as here). */
  loadBalancerSourceRanges?: string[];
  /** A Service naming a class is left to that class's controller. */
  loadBalancerClass?: string;
  /** Allocated by the API server for `LoadBalancer` + `externalTrafficPolicy: Local`. */
  healthCheckNodePort?: number;
  allocateLoadBalancerNodePorts?: boolean;
}

export interface Service extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Service';
  spec?: ServiceSpec;
  status?: { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string; ipMode?: 'VIP' | 'Proxy' }> } };
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Endpoints';
  subsets?: EndpointSubset[];
}

export interface ServiceAccount extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'ServiceAccount';
  secrets?: ObjectReference[];
  imagePullSecrets?: Array<{ name?: string }>;
  automountServiceAccountToken?: boolean;
}

export interface EventSource {
  component?: string;
  host?: string;
}

/** core/v1 Event (what `kubectl describe` reads). */
export interface Event extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Event';
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: EventSource;
  firstTimestamp?: Time | null;
  lastTimestamp?: Time | null;
  count?: number;
  type?: 'Normal' | 'Warning';
  eventTime?: Time | null;
  action?: string;
  reportingComponent?: string;
  reportingInstance?: string;
  related?: ObjectReference;
}

/** POST pods/<name>/binding: how the scheduler assigns a node. */
export interface Binding extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Binding';
  target: ObjectReference;
}


