/**
 * rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding. Field names
 * are upstream's; the server evaluates them in control-plane/src/apiserver/auth/rbac/.
 */
import type { KubeObject, LabelSelector } from './meta.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** One grant: every verb × every (group, resource[, name]) — or × every non-resource URL. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface AggregationRule {
  clusterRoleSelectors?: LabelSelector[];
}

export interface Role extends KubeObject {
  apiVersion?: 'rbac.authorization.k8s.io/v1';
  kind?: 'Role';
  rules?: PolicyRule[] | null;
}

export interface ClusterRole extends KubeObject {
  apiVersion?: 'rbac.authorization.k8s.io/v1';
  kind?: 'ClusterRole';
  rules?: PolicyRule[] | null;
  aggregationRule?: AggregationRule;
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  /** `rbac.authorization.k8s.io` for User and Group, `''` for ServiceAccount. */
  apiGroup?: string;
  name: string;
  /** ServiceAccount subjects only. */
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole';
  name: string;
}

export interface RoleBinding extends KubeObject {
  apiVersion?: 'rbac.authorization.k8s.io/v1';
  kind?: 'RoleBinding';
  subjects?: Subject[];
  roleRef: RoleRef;
}

export interface ClusterRoleBinding extends KubeObject {
  apiVersion?: 'rbac.authorization.k8s.io/v1';
  kind?: 'ClusterRoleBinding';
  subjects?: Subject[];
  roleRef: RoleRef;
}
