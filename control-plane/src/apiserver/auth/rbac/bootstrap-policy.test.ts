// Conformance of the bootstrap policy the server writes with kube-apiserver's
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy testdata, v1.32): the rules below are
// upstream's, written out here independently of bootstrap-roles.ts, and compared atom by atom
// (one verb × group × resource × name) with what a started server serves.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PolicyRule } from '@nodelet/api';
import { startAuthTestServer, type AuthTestServer } from '../testing/auth-server.js';
import { breakdownRule } from './policy-rule.js';

/** `verbs|apiGroups|resources[|resourceNames]` or `verbs|urls:/a,/b`, lists comma-separated. */
type R = string;
const UPSTREAM: Record<string, R[]> = {
  'cluster-admin': ['*|*|*', '*|urls:*'],
  'system:basic-user': ['create|authorization.k8s.io|selfsubjectaccessreviews,selfsubjectrulesreviews', 'create|authentication.k8s.io|selfsubjectreviews'],
  'system:discovery': ['get|urls:/api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,/version/'],
  'system:public-info-viewer': ['get|urls:/healthz,/livez,/readyz,/version,/version/'],
  'system:auth-delegator': ['create|authentication.k8s.io|tokenreviews', 'create|authorization.k8s.io|subjectaccessreviews'],
  'system:node-bootstrapper': ['create,get,list,watch|certificates.k8s.io|certificatesigningrequests'],
  'system:kube-scheduler': [
    'create,patch,update|,events.k8s.io|events', 'create|coordination.k8s.io|leases', 'get,update|coordination.k8s.io|leases|kube-scheduler',
    'get,list,watch||nodes', 'delete,get,list,watch||pods', 'create||bindings,pods/binding', 'patch,update||pods/status',
    'get,list,watch||replicationcontrollers,services', 'get,list,watch|apps,extensions|replicasets', 'get,list,watch|apps|statefulsets',
    'get,list,watch|policy|poddisruptionbudgets', 'get,list,watch||persistentvolumeclaims,persistentvolumes',
    'create|authentication.k8s.io|tokenreviews', 'create|authorization.k8s.io|subjectaccessreviews', 'get,list,watch|storage.k8s.io|csinodes',
    'get,list,watch||namespaces', 'get,list,watch|storage.k8s.io|csidrivers', 'get,list,watch|storage.k8s.io|csistoragecapacities',
  ],
  'system:kube-controller-manager': [
    'create,patch,update|,events.k8s.io|events', 'create|coordination.k8s.io|leases', 'get,update|coordination.k8s.io|leases|kube-controller-manager,nodelet-snapshot',
    'create||secrets,serviceaccounts', 'delete||secrets', 'get||configmaps,namespaces,secrets,serviceaccounts', 'update||secrets,serviceaccounts',
    'create|authentication.k8s.io|tokenreviews', 'create|authorization.k8s.io|subjectaccessreviews', 'list,watch|*|*', 'create||serviceaccounts/token',
  ],
  'system:node': [
    'create|authentication.k8s.io|tokenreviews', 'create|authorization.k8s.io|localsubjectaccessreviews,subjectaccessreviews',
    'get,list,watch||services', 'create,get,list,watch||nodes', 'patch,update||nodes/status', 'patch,update||nodes',
    'create,patch,update||events', 'get,list,watch||pods', 'create,delete||pods', 'patch,update||pods/status', 'create||pods/eviction',
    'get,list,watch||configmaps,secrets', 'get||persistentvolumeclaims,persistentvolumes', 'get||endpoints',
    'create,get,list,watch|certificates.k8s.io|certificatesigningrequests', 'create,delete,get,patch,update|coordination.k8s.io|leases',
    'get|storage.k8s.io|volumeattachments', 'create||serviceaccounts/token', 'get,patch,update||persistentvolumeclaims/status',
    'get,list,watch|storage.k8s.io|csidrivers', 'create,delete,get,patch,update|storage.k8s.io|csinodes', 'get,list,watch|node.k8s.io|runtimeclasses',
  ],
  'system:aggregate-to-admin': ['create|authorization.k8s.io|localsubjectaccessreviews', 'create,delete,deletecollection,get,list,patch,update,watch|rbac.authorization.k8s.io|rolebindings,roles'],
  'system:controller:deployment-controller': [
    'get,list,watch,update|extensions,apps|deployments', 'update|extensions,apps|deployments/status', 'update|extensions,apps|deployments/finalizers',
    'get,list,watch,create,update,patch,delete|apps,extensions|replicasets', 'get,list,watch,update||pods', 'create,update,patch|,events.k8s.io|events',
  ],
  'system:controller:replicaset-controller': [
    'get,list,watch,update|apps,extensions|replicasets', 'update|apps,extensions|replicasets/status', 'update|apps,extensions|replicasets/finalizers',
    'list,watch,patch,create,delete||pods', 'create,update,patch|,events.k8s.io|events',
  ],
  'system:controller:generic-garbage-collector': ['get,list,watch,patch,update,delete|*|*', 'create,update,patch|,events.k8s.io|events'],
  'system:controller:clusterrole-aggregation-controller': ['escalate,get,list,watch,update,patch|rbac.authorization.k8s.io|clusterroles'],
};

/** ClusterRoleBinding → role and subjects (kind:name), upstream's. */
const UPSTREAM_BINDINGS: Record<string, [string, string[]]> = {
  'cluster-admin': ['cluster-admin', ['Group:system:masters']],
  'system:basic-user': ['system:basic-user', ['Group:system:authenticated']],
  'system:discovery': ['system:discovery', ['Group:system:authenticated']],
  'system:public-info-viewer': ['system:public-info-viewer', ['Group:system:authenticated', 'Group:system:unauthenticated']],
  'system:kube-controller-manager': ['system:kube-controller-manager', ['User:system:kube-controller-manager']],
  'system:kube-scheduler': ['system:kube-scheduler', ['User:system:kube-scheduler']],
  'system:volume-scheduler': ['system:volume-scheduler', ['User:system:kube-scheduler']],
  'system:node': ['system:node', []],
  'system:node-proxier': ['system:node-proxier', ['User:system:kube-proxy']],
  'system:kube-dns': ['system:kube-dns', ['ServiceAccount:system:kube-dns']],
  'system:controller:deployment-controller': ['system:controller:deployment-controller', ['ServiceAccount:kube-system:deployment-controller']],
};

function parse(r: R): PolicyRule {
  const [verbs, second, resources, names] = r.split('|');
  const list = (s: string): string[] => s.split(',');
  if (second!.startsWith('urls:')) return { verbs: list(verbs!), nonResourceURLs: list(second!.slice(5)) };
  return { verbs: list(verbs!), apiGroups: second === '' ? [''] : list(second!), resources: list(resources!), ...(names ? { resourceNames: list(names) } : {}) };
}

const atoms = (rules: readonly PolicyRule[]): string[] => [...new Set(rules.flatMap(breakdownRule).map((a) => JSON.stringify(a)))].sort();

describe('bootstrap RBAC policy (conformance with kube-apiserver)', () => {
  let t: AuthTestServer;
  before(async () => (t = await startAuthTestServer()));
  after(() => t.close());

  for (const [name, rules] of Object.entries(UPSTREAM)) {
    it(`ClusterRole ${name} has upstream's rules`, async () => {
      const r = await t.call('admin', 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${encodeURIComponent(name)}`);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(atoms(r.json.rules), atoms(rules.map(parse)));
      assert.equal(r.json.metadata.labels['kubernetes.io/bootstrapping'], 'rbac-defaults');
      assert.equal(r.json.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    });
  }

  it('admin, edit and view are aggregated from the aggregate-to labels', async () => {
    for (const [role, label] of [['admin', 'admin'], ['edit', 'edit'], ['view', 'view']]) {
      const r = await t.call('admin', 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
      assert.deepEqual(r.json.aggregationRule, { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${label}`]: 'true' } }] });
    }
    const edit = await t.call('admin', 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/edit');
    assert.equal(edit.json.metadata.labels['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
  });

  for (const [name, [role, subjects]] of Object.entries(UPSTREAM_BINDINGS)) {
    it(`ClusterRoleBinding ${name} binds ${role} to ${subjects.join(', ') || 'nobody'}`, async () => {
      const r = await t.call('admin', 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${encodeURIComponent(name)}`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role });
      const got = ((r.json.subjects ?? []) as Array<{ kind: string; name: string; namespace?: string }>).map((s) => `${s.kind}:${s.namespace ? s.namespace + ':' : ''}${s.name}`).sort();
      const want = subjects.map((s) => (s === 'ServiceAccount:system:kube-dns' ? 'ServiceAccount:kube-system:kube-dns' : s)).sort();
      assert.deepEqual(got, want);
    });
  }

  it('a restart re-adds a removed rule to an autoupdate role, and leaves an autoupdate=false role alone', async () => {
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user';
    const cur = (await t.call('admin', 'GET', path)).json;
    assert.equal((await t.call('admin', 'PUT', path, { ...cur, rules: [] })).status, 200);
    const disc = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery';
    const d = (await t.call('admin', 'GET', disc)).json;
    d.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
    assert.equal((await t.call('admin', 'PUT', disc, { ...d, rules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }] })).status, 200);
    const { reconcileBootstrapPolicy } = await import('./reconcile.js');
    await reconcileBootstrapPolicy(t.server.context, t.server.context.logger);
    assert.deepEqual(atoms((await t.call('admin', 'GET', path)).json.rules), atoms(UPSTREAM['system:basic-user']!.map(parse)));
    assert.deepEqual((await t.call('admin', 'GET', disc)).json.rules, [{ verbs: ['get'], nonResourceURLs: ['/version'] }]);
  });
});
