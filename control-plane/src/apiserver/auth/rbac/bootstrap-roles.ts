/**
 * The cluster roles and bindings kube-apiserver creates at start (its RBAC bootstrap policy,
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy), with upstream's names and rules, plus the
 * few nodelet adds (prefixed `nodelet:`). `reconcileBootstrapPolicy` (reconcile.ts) writes them.
 *
 * Who gets what:
 *   system:masters            cluster-admin (everything)
 *   system:authenticated      system:basic-user (self reviews), system:discovery, system:public-info-viewer
 *   system:kube-scheduler     system:kube-scheduler + system:volume-scheduler
 *   system:kube-controller-manager  system:kube-controller-manager (reads everything, writes little);
 *                             each controller acts as kube-system/<controller> (controller-roles.ts)
 *   system:nodes              the Node authorizer (node-authorizer.ts) with the system:node rules;
 *                             the system:node binding has no subjects, as upstream
 *   system:bootstrappers      nodelet:node-bootstrapper (exchange a bootstrap token for a node credential)
 *   system:serviceaccounts    system:service-account-issuer-discovery
 *   kube-system/metrics-server  system:metrics-server (the built-in scraper, metrics/scraper.ts)
 * admin/edit/view are aggregated from the system:aggregate-to-* roles by the clusterrole
 * aggregation controller.
 */
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from '@nodelet/api';
import {
  binding, clusterBinding, clusterRole, EVENTS_RULE, group, READ, READ_WRITE, role, rule, serviceAccount, urls, user, WRITE,
} from './policy-builders.js';

const AGG_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGG_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGG_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/** The node rules: what the Node authorizer grants a node beyond its per-object checks (upstream's system:node role). */
export const NODE_RULES = [
  rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
  rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews', 'subjectaccessreviews']),
  rule(READ, [''], ['services']),
  rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  rule(['patch', 'update'], [''], ['nodes/status']),
  rule(['patch', 'update'], [''], ['nodes']),
  rule(['create', 'patch', 'update'], [''], ['events']),
  rule(READ, [''], ['pods']),
  rule(['create', 'delete'], [''], ['pods']),
  rule(['patch', 'update'], [''], ['pods/status']),
  rule(['create'], [''], ['pods/eviction']),
  rule(READ, [''], ['configmaps', 'secrets']),
  rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], [''], ['endpoints']),
  rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
  rule(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
  rule(['get'], ['storage.k8s.io'], ['volumeattachments']),
  rule(['create'], [''], ['serviceaccounts/token']),
  rule(['get', 'patch', 'update'], [''], ['persistentvolumeclaims/status']),
  rule(READ, ['storage.k8s.io'], ['csidrivers']),
  rule(['create', 'delete', 'get', 'patch', 'update'], ['storage.k8s.io'], ['csinodes']),
  rule(READ, ['node.k8s.io'], ['runtimeclasses']),
];

/**
 * What a nodelet node does beyond a kubelet, granted by the Node authorizer next to
 * {@link NODE_RULES} (the system:node role itself stays exactly upstream's).
 */
export const NODELET_NODE_RULES = [
  // The agent's service proxy and DNS read what kube-proxy reads (system:node-proxier).
  rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
  rule(['list', 'watch'], [''], ['endpoints']),
  // The agent's DNS answers NXDOMAIN for names in namespaces that do not exist, as CoreDNS does.
  rule(['list', 'watch'], [''], ['namespaces']),
  // The agent enforces NetworkPolicies (docs/network.md): the policies, and namespace labels (above).
  rule(['list', 'watch'], ['networking.k8s.io'], ['networkpolicies']),
  // A node renews its own credential (the handler checks it is its own).
  rule(['create'], ['nodelet.io'], ['nodecredentials']),
];

export function bootstrapClusterRoles(): ClusterRole[] {
  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('admin', [], {}, AGG_ADMIN),
    clusterRole('edit', [], { [AGG_ADMIN]: 'true' }, AGG_EDIT),
    clusterRole('view', [], { [AGG_EDIT]: 'true' }, AGG_VIEW),
    clusterRole('system:aggregate-to-admin', [
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      rule(READ_WRITE, ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
    ], { [AGG_ADMIN]: 'true' }),
    clusterRole('system:aggregate-to-edit', [
      rule(READ, [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      rule(['create'], [''], ['pods/eviction']),
      rule(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(WRITE, ['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
      rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
      rule(WRITE, ['extensions'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'ingresses', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale']),
      rule(WRITE, ['policy'], ['poddisruptionbudgets']),
      rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
      rule(READ_WRITE, ['coordination.k8s.io'], ['leases']),
    ], { [AGG_EDIT]: 'true' }),
    clusterRole('system:aggregate-to-view', [
      rule(READ, [''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status']),
      rule(READ, [''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['discovery.k8s.io'], ['endpointslices']),
      rule(READ, ['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      rule(READ, ['extensions'], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale']),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ], { [AGG_VIEW]: 'true' }),
    clusterRole('system:auth-delegator', [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'])]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'])]),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-approver', [rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client'])]),
    clusterRole('system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', [rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet'])]),
    clusterRole('system:certificates.k8s.io:kubelet-serving-approver', [rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kubelet-serving'])]),
    clusterRole('system:certificates.k8s.io:legacy-unknown-approver', [rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/legacy-unknown'])]),
    clusterRole('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])]),
    clusterRole('system:heapster', [rule(READ, [''], ['events', 'namespaces', 'nodes', 'pods']), rule(READ, ['extensions'], ['deployments'])]),
    clusterRole('system:kube-aggregator', [rule(READ, [''], ['endpoints', 'services'])]),
    clusterRole('system:kube-controller-manager', [
      EVENTS_RULE,
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      // nodelet-snapshot: the server's scheduled store snapshots run under this identity (docs/backup.md).
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager', 'nodelet-snapshot']),
      rule(['create'], [''], ['secrets', 'serviceaccounts']),
      rule(['delete'], [''], ['secrets']),
      rule(['get'], [''], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
      rule(['update'], [''], ['secrets', 'serviceaccounts']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [''], ['serviceaccounts/token']),
    ]),
    clusterRole('system:kube-dns', [rule(['list', 'watch'], [''], ['endpoints', 'services'])]),
    clusterRole('system:kube-scheduler', [
      EVENTS_RULE,
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
      rule(READ, [''], ['nodes']),
      rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
      rule(['create'], [''], ['bindings', 'pods/binding']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(READ, [''], ['replicationcontrollers', 'services']),
      rule(READ, ['apps', 'extensions'], ['replicasets']),
      rule(READ, ['apps'], ['statefulsets']),
      rule(READ, ['policy'], ['poddisruptionbudgets']),
      rule(READ, [''], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      rule(READ, ['storage.k8s.io'], ['csinodes']),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['storage.k8s.io'], ['csidrivers']),
      rule(READ, ['storage.k8s.io'], ['csistoragecapacities']),
    ]),
    clusterRole('system:kubelet-api-admin', [
      rule(READ, [''], ['nodes']),
      rule(['proxy'], [''], ['nodes']),
      rule(['*'], [''], ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats']),
    ]),
    clusterRole('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
    clusterRole('system:node', NODE_RULES),
    clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests'])]),
    clusterRole('system:node-problem-detector', [rule(['get'], [''], ['nodes']), rule(['patch'], [''], ['nodes/status']), EVENTS_RULE]),
    clusterRole('system:node-proxier', [
      rule(['list', 'watch'], [''], ['endpoints', 'services']),
      rule(READ, [''], ['nodes']),
      EVENTS_RULE,
      rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
    ]),
    clusterRole('system:persistent-volume-provisioner', [
      rule(['create', 'delete', 'get', 'list', 'watch'], [''], ['persistentvolumes']),
      rule(['get', 'list', 'update', 'watch'], [''], ['persistentvolumeclaims']),
      rule(READ, ['storage.k8s.io'], ['storageclasses']),
      rule(['watch'], [''], ['events']),
      EVENTS_RULE,
    ]),
    clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('system:service-account-issuer-discovery', [urls(['get'], ['/.well-known/openid-configuration', '/openid/v1/jwks'])]),
    clusterRole('system:volume-scheduler', [
      rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumes']),
      rule(READ, ['storage.k8s.io'], ['storageclasses']),
      rule(['get', 'list', 'patch', 'update', 'watch'], [''], ['persistentvolumeclaims']),
    ]),
    // nodelet: `nodelet join` exchanges a bootstrap token for a node credential (auth/node-credentials.ts).
    clusterRole('nodelet:node-bootstrapper', [rule(['create'], ['nodelet.io'], ['nodecredentials'])]),
    // The built-in metrics-server (metrics/scraper.ts) with the roles its upstream manifest
    // installs: its own (scrape nodes' /metrics/resource), and read access to metrics.k8s.io
    // aggregated into admin, edit and view.
    clusterRole('system:metrics-server', [rule(['get'], [''], ['nodes/metrics']), rule(READ, [''], ['nodes', 'pods'])]),
    clusterRole('system:aggregated-metrics-reader', [rule(READ, ['metrics.k8s.io'], ['nodes', 'pods'])], { [AGG_ADMIN]: 'true', [AGG_EDIT]: 'true', [AGG_VIEW]: 'true' }),
  ];
}

export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    clusterBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    clusterBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
    clusterBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
    clusterBinding('system:kube-controller-manager', 'system:kube-controller-manager', [user('system:kube-controller-manager')]),
    clusterBinding('system:kube-dns', 'system:kube-dns', [serviceAccount('kube-system', 'kube-dns')]),
    clusterBinding('system:kube-scheduler', 'system:kube-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('system:monitoring', 'system:monitoring', [group('system:monitoring')]),
    clusterBinding('system:node', 'system:node', []),
    clusterBinding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
    clusterBinding('system:public-info-viewer', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    clusterBinding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
    clusterBinding('system:volume-scheduler', 'system:volume-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('nodelet:node-bootstrapper', 'nodelet:node-bootstrapper', [group('system:bootstrappers')]),
    clusterBinding('system:metrics-server', 'system:metrics-server', [serviceAccount('kube-system', 'metrics-server')]),
    // The API server towards agents (logs, exec, port-forward, nodes/proxy): only the kubelet API,
    // never system:masters (pki/pki.ts issues its certificate).
    clusterBinding('system:kube-apiserver-kubelet-client', 'system:kubelet-api-admin', [user('system:kube-apiserver-kubelet-client')]),
  ];
}

/** Namespaced roles upstream creates in kube-system (leader election of the two control-plane components). */
export function bootstrapRoles(): Role[] {
  return [
    role('kube-system', 'system::leader-locking-kube-controller-manager', [
      rule(['watch'], [''], ['configmaps']),
      rule(['get', 'update'], [''], ['configmaps'], ['kube-controller-manager']),
    ]),
    role('kube-system', 'system::leader-locking-kube-scheduler', [
      rule(['watch'], [''], ['configmaps']),
      rule(['get', 'update'], [''], ['configmaps'], ['kube-scheduler']),
    ]),
  ];
}

export function bootstrapRoleBindings(): RoleBinding[] {
  return [
    binding('kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [
      user('system:kube-controller-manager'),
      serviceAccount('kube-system', 'kube-controller-manager'),
    ]),
    binding('kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', [
      user('system:kube-scheduler'),
      serviceAccount('kube-system', 'kube-scheduler'),
    ]),
  ];
}
