/**
 * Strategies of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy
 * (pkg/registry/networking): validation as upstream and NetworkPolicy defaults. The agents
 * enforce NetworkPolicies (docs/network.md), so a write answers no warning, as upstream.
 */
import { defaultNetworkPolicy, validateIngress, validateIngressClass, validateIngressStatus, validateNetworkPolicy } from '@nodelet/api';
import type { Strategy } from '../resource.js';

export const ingressStrategy: Strategy = {
  prepareForCreate(obj) {
    delete obj.status;
  },
  validate: (obj, old) => [...validateIngress(obj, old), ...validateIngressStatus(obj)],
};

export const ingressClassStrategy: Strategy = {
  validate: (obj, old) => validateIngressClass(obj, old),
};

export const networkPolicyStrategy: Strategy = {
  defaults: (obj) => defaultNetworkPolicy(obj),
  validate: (obj) => validateNetworkPolicy(obj),
};
