/**
 * Strategies of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy
 * (pkg/registry/networking): validation as upstream, NetworkPolicy defaults, and a Warning on every
 * NetworkPolicy write because nothing on a nodelet cluster enforces them yet.
 */
import { defaultNetworkPolicy, validateIngress, validateIngressClass, validateIngressStatus, validateNetworkPolicy } from '@nodelet/api';
import type { Strategy } from '../resource.js';
import { warningHeaderValue } from '../admission/recorder.js';

/** The warning of every NetworkPolicy create and update. */
export const NETWORKPOLICY_NOT_ENFORCED = 'NetworkPolicy is not enforced on this cluster yet: the policy is stored but all pod traffic is still allowed';

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
  warnings: () => [warningHeaderValue(NETWORKPOLICY_NOT_ENFORCED)],
};
