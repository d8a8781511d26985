/**
 * networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy. Names as in k8s.io/api/networking/v1.
 * The bundled server stores and validates them; it ships no ingress controller and does not yet
 * enforce NetworkPolicy (docs/apiserver.md).
 */
import type { KubeObject, LabelSelector } from './meta.js';

export interface ServiceBackendPort {
  name?: string;
  number?: number;
}

export interface IngressBackend {
  service?: { name: string; port?: ServiceBackendPort };
  resource?: { apiGroup?: string; kind: string; name: string };
}

export interface HTTPIngressPath {
  path?: string;
  pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific';
  backend: IngressBackend;
}

export interface IngressRule {
  host?: string;
  http?: { paths: HTTPIngressPath[] };
}

export interface IngressSpec {
  /** The IngressClass whose controller serves this Ingress; set from the default class at admission when unset. */
  ingressClassName?: string;
  defaultBackend?: IngressBackend;
  tls?: Array<{ hosts?: string[]; secretName?: string }>;
  rules?: IngressRule[];
}

export interface Ingress extends KubeObject {
  apiVersion?: 'networking.k8s.io/v1';
  kind?: 'Ingress';
  spec?: IngressSpec;
  status?: { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string; ports?: Array<{ port: number; protocol: string; error?: string }> }> } };
}

export interface IngressClass extends KubeObject {
  apiVersion?: 'networking.k8s.io/v1';
  kind?: 'IngressClass';
  spec?: {
    /** The controller that serves Ingresses of this class, as a domain-prefixed path (`k8s.io/ingress-nginx`). Immutable. */
    controller?: string;
    parameters?: { apiGroup?: string; kind: string; name: string; scope?: 'Cluster' | 'Namespace'; namespace?: string };
  };
}

export interface NetworkPolicyPort {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port?: number | string;
  endPort?: number;
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface NetworkPolicy extends KubeObject {
  apiVersion?: 'networking.k8s.io/v1';
  kind?: 'NetworkPolicy';
  spec?: {
    podSelector?: LabelSelector;
    ingress?: Array<{ ports?: NetworkPolicyPort[]; from?: NetworkPolicyPeer[] }>;
    egress?: Array<{ ports?: NetworkPolicyPort[]; to?: NetworkPolicyPeer[] }>;
    policyTypes?: Array<'Ingress' | 'Egress'>;
  };
}

/** The annotation marking the default IngressClass (value `"true"`). */
export const ANN_DEFAULT_INGRESS_CLASS = 'ingressclass.kubernetes.io/is-default-class';
/** The deprecated annotation naming an Ingress's class before `spec.ingressClassName`. */
export const ANN_INGRESS_CLASS = 'kubernetes.io/ingress.class';
