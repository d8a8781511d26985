/**
 * One ClusterRole per controller (`system:controller:<name>`), bound to the service account
 * `kube-system/<name>` the controller acts as — kube-controller-manager with
 * `--use-service-account-credentials`. Rules are upstream's (bootstrappolicy/controller_policy.go)
 * for the controllers nodelet runs or will run.
 */
import type { ClusterRole, ClusterRoleBinding } from '@nodelet/api';
import { clusterBinding, clusterRole, EVENTS_RULE, READ, rule, serviceAccount } from './policy-builders.js';

export const CONTROLLER_ROLE_PREFIX = 'system:controller:';

const ROLES: ReadonlyArray<[name: string, rules: ReturnType<typeof rule>[]]> = [
  ['clusterrole-aggregation-controller', [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], ['rbac.authorization.k8s.io'], ['clusterroles'])]],
  ['cronjob-controller', [
    rule(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['cronjobs/status']),
    rule(['update'], ['batch'], ['cronjobs/finalizers']),
    rule(['list', 'delete'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['daemon-set-controller', [
    rule(READ, ['extensions', 'apps'], ['daemonsets']),
    rule(['update'], ['extensions', 'apps'], ['daemonsets/status']),
    rule(['update'], ['extensions', 'apps'], ['daemonsets/finalizers']),
    rule(['list', 'watch'], [''], ['nodes']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
    rule(['create'], [''], ['pods/binding']),
    rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], ['apps'], ['controllerrevisions']),
    EVENTS_RULE,
  ]],
  ['deployment-controller', [
    rule(['get', 'list', 'watch', 'update'], ['extensions', 'apps'], ['deployments']),
    rule(['update'], ['extensions', 'apps'], ['deployments/status']),
    rule(['update'], ['extensions', 'apps'], ['deployments/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps', 'extensions'], ['replicasets']),
    rule(['get', 'list', 'watch', 'update'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['disruption-controller', [
    rule(READ, ['extensions', 'apps'], ['deployments']),
    rule(READ, ['apps', 'extensions'], ['replicasets']),
    rule(READ, [''], ['replicationcontrollers']),
    rule(READ, ['policy'], ['poddisruptionbudgets']),
    rule(READ, ['apps'], ['statefulsets']),
    rule(['update'], ['policy'], ['poddisruptionbudgets/status']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(['get'], ['*'], ['*/scale']),
    EVENTS_RULE,
  ]],
  ['endpoint-controller', [
    rule(READ, [''], ['services', 'pods']),
    rule(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']),
    rule(['create'], [''], ['endpoints/restricted']),
    EVENTS_RULE,
  ]],
  ['endpointslice-controller', [
    rule(READ, [''], ['services', 'pods', 'nodes']),
    rule(['update'], [''], ['services/finalizers']),
    rule(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']),
    EVENTS_RULE,
  ]],
  ['generic-garbage-collector', [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), EVENTS_RULE]],
  ['job-controller', [
    rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['jobs/status']),
    rule(['update'], ['batch'], ['jobs/finalizers']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['namespace-controller', [
    rule(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
    rule(['update'], [''], ['namespaces/finalize', 'namespaces/status']),
    rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
  ]],
  ['node-controller', [
    rule(['get', 'list', 'update', 'delete', 'patch'], [''], ['nodes']),
    rule(['patch', 'update'], [''], ['nodes/status']),
    rule(['patch', 'update'], [''], ['pods/status']),
    rule(['list', 'get', 'delete'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['persistent-volume-binder', [
    rule(['create', 'delete', 'get', 'list', 'update', 'watch'], [''], ['persistentvolumes']),
    rule(['update'], [''], ['persistentvolumes/status']),
    rule(['get', 'list', 'update', 'watch'], [''], ['persistentvolumeclaims']),
    rule(['update'], [''], ['persistentvolumeclaims/status']),
    rule(['create', 'delete', 'get', 'list', 'watch'], [''], ['pods']),
    rule(READ, ['storage.k8s.io'], ['storageclasses']),
    rule(['list', 'watch'], [''], ['nodes']),
    EVENTS_RULE,
    rule(['watch'], [''], ['events']),
  ]],
  ['pod-garbage-collector', [
    rule(['list', 'watch', 'delete'], [''], ['pods']),
    rule(['get', 'list'], [''], ['nodes']),
    rule(['patch'], [''], ['pods/status']),
  ]],
  ['replicaset-controller', [
    rule(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['replicasets']),
    rule(['update'], ['apps', 'extensions'], ['replicasets/status']),
    rule(['update'], ['apps', 'extensions'], ['replicasets/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['replication-controller', [
    rule(['get', 'list', 'watch', 'update'], [''], ['replicationcontrollers']),
    rule(['update'], [''], ['replicationcontrollers/status']),
    rule(['update'], [''], ['replicationcontrollers/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
    EVENTS_RULE,
  ]],
  ['tokens-controller', [
    rule(['get', 'list', 'watch', 'update', 'delete'], [''], ['secrets']),
    rule(['get', 'list', 'watch'], [''], ['serviceaccounts']),
    EVENTS_RULE,
  ]],
  ['root-ca-cert-publisher', [rule(['create', 'update'], [''], ['configmaps']), EVENTS_RULE]],
  ['service-controller', [
    rule(['get', 'list', 'watch'], [''], ['services']),
    rule(['patch', 'update'], [''], ['services/status']),
    rule(['list', 'watch'], [''], ['nodes']),
    EVENTS_RULE,
  ]],
  ['service-account-controller', [rule(['create'], [''], ['serviceaccounts']), EVENTS_RULE]],
  ['statefulset-controller', [
    rule(['list', 'watch'], [''], ['pods']),
    rule(READ, ['apps'], ['statefulsets']),
    rule(['update'], ['apps'], ['statefulsets/status']),
    rule(['update'], ['apps'], ['statefulsets/finalizers']),
    rule(['get', 'create', 'delete', 'update', 'patch'], [''], ['pods']),
    rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']),
    rule(['get', 'create', 'update', 'patch'], [''], ['persistentvolumeclaims']),
    EVENTS_RULE,
  ]],
  ['horizontal-pod-autoscaler', [
    rule(['get', 'list', 'watch'], ['autoscaling'], ['horizontalpodautoscalers']),
    rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
    rule(['get', 'update'], ['*'], ['*/scale']),
    rule(['list'], [''], ['pods']),
    rule(['list'], ['metrics.k8s.io'], ['pods']),
    rule(['get', 'list'], ['custom.metrics.k8s.io'], ['*']),
    rule(['get', 'list'], ['external.metrics.k8s.io'], ['*']),
    EVENTS_RULE,
  ]],
  // Counts any kind a quota names (count/<resource>.<group>), so it may list and watch everything.
  ['resourcequota-controller', [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [''], ['resourcequotas/status']), EVENTS_RULE]],
  ['ttl-after-finished-controller', [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), EVENTS_RULE]],
  ['certificate-controller', [
    rule(['get', 'list', 'watch', 'delete'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
    rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet']),
    rule(['sign'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/legacy-unknown', 'kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    EVENTS_RULE,
  ]],
  // nodelet, not upstream: the in-server local-path provisioner (controllers/volume/), with the
  // rules of upstream's system:persistent-volume-provisioner that external provisioners are bound to.
  ['local-path-provisioner', [
    rule(['create', 'delete', 'get', 'list', 'watch'], [''], ['persistentvolumes']),
    rule(['get', 'list', 'update', 'watch'], [''], ['persistentvolumeclaims']),
    rule(READ, ['storage.k8s.io'], ['storageclasses']),
    rule(['watch'], [''], ['events']),
    EVENTS_RULE,
  ]],
  // nodelet, not upstream: approves a node's own serving-certificate requests (controllers/certificates/approver.ts).
  ['kubelet-serving-cert-approver', [
    rule(READ, ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/approval']),
    rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kubelet-serving']),
    rule(READ, [''], ['nodes']),
    // Service cluster IPs are never approved in a node's certificate.
    rule(READ, [''], ['services']),
    EVENTS_RULE,
  ]],
];

/** The service-account names (in kube-system) of the controllers. */
export const CONTROLLER_ACCOUNTS: readonly string[] = ROLES.map(([name]) => name);

export function controllerClusterRoles(): ClusterRole[] {
  return ROLES.map(([name, rules]) => clusterRole(CONTROLLER_ROLE_PREFIX + name, rules));
}

export function controllerClusterRoleBindings(): ClusterRoleBinding[] {
  return ROLES.map(([name]) => clusterBinding(CONTROLLER_ROLE_PREFIX + name, CONTROLLER_ROLE_PREFIX + name, [serviceAccount('kube-system', name)]));
}
