/**
 * node.k8s.io/v1 RuntimeClass: which CRI handler runs a pod (`handler`, passed to the runtime as
 * RunPodSandbox's `runtime_handler`), the pod overhead it adds, and where such pods may be
 * scheduled. Names as in k8s.io/api/node/v1.
 */
import type { KubeObject } from './meta.js';
import type { Quantity, Toleration } from './pod.js';

export interface RuntimeClassOverhead {
  podFixed?: Record<string, Quantity>;
}

export interface RuntimeClassScheduling {
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

export interface RuntimeClass extends KubeObject {
  apiVersion?: 'node.k8s.io/v1';
  kind?: 'RuntimeClass';
  /** The CRI runtime handler name (a DNS-1123 label, immutable). */
  handler: string;
  overhead?: RuntimeClassOverhead;
  scheduling?: RuntimeClassScheduling;
}
