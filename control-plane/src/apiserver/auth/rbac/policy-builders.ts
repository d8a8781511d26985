/** Small builders for the bootstrap policy tables (rules, roles, bindings), so the tables read like policy. */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from '@nodelet/api';
import { RBAC_GROUP } from '@nodelet/api';

/** kube-apiserver marks what it creates so `kubectl get clusterroles -l kubernetes.io/bootstrapping=rbac-defaults` finds it. */
export const BOOTSTRAP_LABELS = Object.freeze({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
/** Set to "false" on a bootstrap object to stop the server from re-adding rules/subjects at start. */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

export const READ = ['get', 'list', 'watch'];
export const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
export const READ_WRITE = [...READ, ...WRITE];
export const READ_UPDATE = [...READ, 'update', 'patch'];

export function rule(verbs: readonly string[], apiGroups: readonly string[], resources: readonly string[], resourceNames?: readonly string[]): PolicyRule {
  return { verbs: [...verbs], apiGroups: [...apiGroups], resources: [...resources], ...(resourceNames ? { resourceNames: [...resourceNames] } : {}) };
}

export function urls(verbs: readonly string[], nonResourceURLs: readonly string[]): PolicyRule {
  return { verbs: [...verbs], nonResourceURLs: [...nonResourceURLs] };
}

/** Events are written by every component: core and events.k8s.io. */
export const EVENTS_RULE = rule(['create', 'update', 'patch'], ['', 'events.k8s.io'], ['events']);

export function clusterRole(name: string, rules: PolicyRule[], extraLabels: Record<string, string> = {}, aggregateFrom?: string): ClusterRole {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS, ...extraLabels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    rules: aggregateFrom ? [] : rules,
    ...(aggregateFrom ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateFrom]: 'true' } }] } } : {}),
  };
}

export function role(namespace: string, name: string, rules: PolicyRule[]): Role {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace, labels: { ...BOOTSTRAP_LABELS }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } }, rules };
}

export const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
export const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
export const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

export function clusterBinding(name: string, roleName: string, subjects: Subject[]): ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
    ...(subjects.length ? { subjects } : {}),
  };
}

export function binding(namespace: string, name: string, roleName: string, subjects: Subject[]): RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace, labels: { ...BOOTSTRAP_LABELS }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName },
    subjects,
  };
}
