// RBAC end to end through the real API machinery: bindings grant, nothing else does, escalation
// is refused, impersonation is authorized part by part, and the review kinds answer for anyone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthTestServer, type AuthTestServer } from '../testing/auth-server.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
const roleBinding = (name: string, ref: { kind: string; name: string }, subjects: unknown[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...ref }, subjects,
});
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });

describe('RBAC authorization', () => {
  let t: AuthTestServer;
  before(async () => {
    t = await startAuthTestServer();
    // alice may read pods in default (a Role), and manage roles and bindings there (not pods).
    assert.equal((await t.call('admin', 'POST', `${RBAC}/namespaces/default/roles`, role('pod-reader', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }]))).status, 201);
    assert.equal((await t.call('admin', 'POST', `${RBAC}/namespaces/default/roles`, role('rbac-admin', [{ verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'] }]))).status, 201);
    for (const r of ['pod-reader', 'rbac-admin']) {
      assert.equal((await t.call('admin', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding(`alice-${r}`, { kind: 'Role', name: r }, [user('alice')]))).status, 201);
    }
  });
  after(() => t.close());

  it('a user with no binding gets 403 with upstream wording; a bound one gets exactly what the role grants', async () => {
    const denied = await t.call('bob', 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(denied.status, 403);
    assert.equal(denied.json.message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"');
    assert.equal((await t.call('alice', 'GET', '/api/v1/namespaces/default/pods')).status, 200, 'the binding is in force when the create returned');
    assert.equal((await t.call('alice', 'GET', '/api/v1/namespaces/kube-system/pods')).status, 403, 'a RoleBinding only grants in its namespace');
    const create = await t.call('alice', 'POST', '/api/v1/namespaces/default/pods', pod('p1'));
    assert.equal(create.status, 403);
    assert.match(create.json.message, /User "alice" cannot create resource "pods"/);
  });

  it('the default ClusterRoles work through bindings: view lists but cannot create', async () => {
    // view is aggregated by the controller; here the role is bound as served by the server.
    await t.call('admin', 'POST', `${RBAC}/clusterroles`, { metadata: { name: 'test-viewer', labels: {} }, rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }] });
    await t.call('admin', 'POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'bob-viewer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-viewer' }, subjects: [{ kind: 'User', name: 'bob' }],
    });
    assert.equal((await t.call('bob', 'GET', '/api/v1/namespaces/kube-system/pods')).status, 200);
    assert.equal((await t.call('bob', 'POST', '/api/v1/namespaces/default/pods', pod('p2'))).status, 403);
    assert.equal((await t.call('admin', 'DELETE', `${RBAC}/clusterrolebindings/bob-viewer`)).status, 200);
    assert.equal((await t.call('bob', 'GET', '/api/v1/namespaces/kube-system/pods')).status, 403, 'deleting the binding revokes at once');
  });

  it('escalation is refused: no role with rules you lack, no binding to a role you do not hold', async () => {
    const r = await t.call('alice', 'POST', `${RBAC}/namespaces/default/roles`, role('pod-killer', [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]));
    assert.equal(r.status, 403);
    assert.match(r.json.message, /^roles\.rbac\.authorization\.k8s\.io "pod-killer" is forbidden: user "alice" \(groups=\["devs" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["delete"\]\}/);
    // A role within what alice holds is fine.
    assert.equal((await t.call('alice', 'POST', `${RBAC}/namespaces/default/roles`, role('pod-lister', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]))).status, 201);
    const bindAdmin = await t.call('alice', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('alice-admin', { kind: 'ClusterRole', name: 'cluster-admin' }, [user('alice')]));
    assert.equal(bindAdmin.status, 403);
    assert.match(bindAdmin.json.message, /is attempting to grant RBAC permissions not currently held/);
    // Binding a role whose rules she holds is fine; so is any role she holds `bind` on.
    assert.equal((await t.call('alice', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('bob-lister', { kind: 'Role', name: 'pod-lister' }, [user('bob')]))).status, 201);
    await t.call('admin', 'POST', `${RBAC}/clusterroles`, { metadata: { name: 'bind-edit' }, rules: [{ verbs: ['bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['edit'] }] });
    await t.call('admin', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('alice-bind-edit', { kind: 'ClusterRole', name: 'bind-edit' }, [user('alice')]));
    assert.equal((await t.call('alice', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('bob-edit', { kind: 'ClusterRole', name: 'edit' }, [user('bob')]))).status, 201);
  });

  it('roleRef is immutable and validated', async () => {
    const b = (await t.call('admin', 'GET', `${RBAC}/namespaces/default/rolebindings/bob-lister`)).json;
    const r = await t.call('admin', 'PUT', `${RBAC}/namespaces/default/rolebindings/bob-lister`, { ...b, roleRef: { ...b.roleRef, name: 'pod-reader' } });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.match(r.json.message, /cannot change roleRef/);
    const bad = await t.call('admin', 'POST', `${RBAC}/clusterrolebindings`, { metadata: { name: 'x' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } });
    assert.equal(bad.status, 422);
    const urlsInRole = await t.call('admin', 'POST', `${RBAC}/namespaces/default/roles`, role('bad', [{ verbs: ['get'], nonResourceURLs: ['/x'] }]));
    assert.equal(urlsInRole.status, 422);
    assert.match(urlsInRole.json.message, /namespaced rules cannot apply to non-resource URLs/);
  });

  it('impersonation needs the impersonate verb for each part, and then runs as that user', async () => {
    const asAlice = await t.call('admin', 'GET', '/api/v1/namespaces/default/pods', undefined, { 'Impersonate-User': 'alice' });
    assert.equal(asAlice.status, 200);
    const asAliceCreate = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('p3'), { 'Impersonate-User': 'alice' });
    assert.equal(asAliceCreate.status, 403);
    assert.match(asAliceCreate.json.message, /User "alice" cannot create/);
    const bobImpersonates = await t.call('bob', 'GET', '/api/v1/namespaces/default/pods', undefined, { 'Impersonate-User': 'alice' });
    assert.equal(bobImpersonates.status, 403);
    assert.equal(bobImpersonates.json.message, 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
    const whoami = await t.call('admin', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, {
      'Impersonate-User': 'system:serviceaccount:default:builder',
    });
    assert.equal(whoami.status, 201);
    assert.deepEqual(whoami.json.status.userInfo, {
      username: 'system:serviceaccount:default:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
    });
    const groups = await t.call('admin', 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, { 'Impersonate-User': 'carol', 'Impersonate-Group': ['g1', 'g2'] });
    assert.deepEqual(groups.json.status.userInfo.groups, ['g1', 'g2', 'system:authenticated']);
    assert.equal((await t.call('admin', 'GET', '/api/v1/pods', undefined, { 'Impersonate-Group': 'g1' })).status, 400, 'groups without a user');
  });

  it('SelfSubjectRulesReview lists what the caller may do; SubjectAccessReview answers for anyone', async () => {
    const rules = await t.call('alice', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { spec: { namespace: 'default' } });
    assert.equal(rules.status, 201);
    const flat = (rules.json.status.resourceRules as Array<{ verbs: string[]; resources?: string[] }>).map((r) => `${r.verbs.join(',')}:${(r.resources ?? []).join(',')}`);
    assert.ok(flat.includes('get,list,watch:pods'), flat.join(' '));
    assert.ok(flat.includes('create:selfsubjectaccessreviews,selfsubjectrulesreviews'), 'basic-user rules are listed');
    assert.ok((rules.json.status.nonResourceRules as Array<{ nonResourceURLs: string[] }>).some((r) => r.nonResourceURLs.includes('/version')));
    const sar = (u: string, verb: string) => t.call('admin', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: { user: u, groups: ['system:authenticated'], resourceAttributes: { namespace: 'default', verb, resource: 'pods' } },
    });
    assert.equal((await sar('alice', 'list')).json.status.allowed, true);
    assert.match((await sar('alice', 'list')).json.status.reason, /RBAC: allowed by RoleBinding "alice-pod-reader\/default" of Role "pod-reader" to User "alice"/);
    assert.equal((await sar('alice', 'delete')).json.status.allowed, false);
    assert.equal((await t.call('bob', 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } } })).status, 403, 'asking about others needs a grant');
    const lsar = await t.call('admin', 'POST', '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews', {
      spec: { user: 'alice', resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' } },
    });
    assert.equal(lsar.status, 400);
  });

  it('a list or watch by metadata.name is authorized for that name (resourceNames rules)', async () => {
    await t.call('admin', 'POST', `${RBAC}/namespaces/default/roles`, role('one-cm', [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'] }]));
    await t.call('admin', 'POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('bob-one-cm', { kind: 'Role', name: 'one-cm' }, [user('bob')]));
    assert.equal((await t.call('bob', 'GET', '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsettings')).status, 200);
    assert.equal((await t.call('bob', 'GET', '/api/v1/namespaces/default/configmaps')).status, 403);
    assert.equal((await t.call('bob', 'GET', '/api/v1/namespaces/default/configmaps/other')).status, 403);
  });
});
