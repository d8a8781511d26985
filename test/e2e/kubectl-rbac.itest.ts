// RBAC with the real kubectl 1.32 (protobuf bodies for roles, bindings and reviews): create
// role/clusterrole/rolebinding/clusterrolebinding, auth can-i [--list], --as/--as-group,
// auth reconcile, auth whoami, the aggregated default roles, and escalation refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { createUserKubeconfig } from '@nodelet/cli';
import { join } from 'node:path';
import { ApiClient, formatKubeconfig } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startControllerManager } from '../../control-plane/src/controllers/index.js';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

describe('kubectl and RBAC', { skip: kubectlUnavailableReason() }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  const stop = new AbortController();
  let closeControllers: (() => Promise<void>) | undefined;
  const ok = async (...args: string[]): Promise<string> => {
    const r = await k(args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const canI = async (...args: string[]): Promise<string> => (await k(['auth', 'can-i', ...args])).stdout.trim();

  before(async () => {
    env = await startKubectlEnv();
    k = await env.newKubectl();
    // The aggregation controller (as in nodelet server, with its own identity) fills admin/edit/view.
    const ids = env.cp.inProcessIdentities;
    const clients: ApiClient[] = [];
    const as = (token: string): ApiClient => {
      const c = new ApiClient({ server: env.cp.url, token, ca: env.cp.caPem });
      clients.push(c);
      return c;
    };
    const cm = await startControllerManager({
      client: as(ids.controllerManager), clientFor: (a) => as(ids.controller(a)), controllers: ['clusterroleaggregation', 'csrsigning'], logger: noopLogger, signal: stop.signal,
      csrSigning: { caCertFile: join(env.dir, 'pki', 'ca.crt'), caKeyFile: join(env.dir, 'pki', 'ca.key') },
    });
    closeControllers = async () => {
      stop.abort();
      await cm.close();
      for (const c of clients) c.close();
    };
    await ok('create', 'namespace', 'team');
  });
  after(async () => {
    await closeControllers?.();
    await env?.close();
  });

  it('create role + rolebinding grants exactly the role, in its namespace, to the user', async () => {
    await ok('create', 'role', 'pod-reader', '--verb=get,list,watch', '--resource=pods', '-n', 'team');
    await ok('create', 'rolebinding', 'alice-reads', '--role=pod-reader', '--user=alice', '-n', 'team');
    assert.equal(await canI('list', 'pods', '-n', 'team', '--as', 'alice'), 'yes');
    assert.equal(await canI('create', 'pods', '-n', 'team', '--as', 'alice'), 'no');
    assert.equal(await canI('list', 'pods', '-n', 'default', '--as', 'alice'), 'no');
    assert.equal((await k(['get', 'pods', '-n', 'team', '--as', 'alice'])).code, 0);
    const denied = await k(['create', 'configmap', 'x', '-n', 'team', '--as', 'alice']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"/);
    const wide = await ok('get', 'rolebinding', 'alice-reads', '-n', 'team', '-o', 'wide');
    assert.match(wide, /alice-reads\s+Role\/pod-reader\s+\S+\s+alice/);
  });

  it('auth can-i --list prints the rules that apply', async () => {
    const list = await ok('auth', 'can-i', '--list', '-n', 'team', '--as', 'alice');
    assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/m);
    assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]/m);
    assert.match(list, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/m);
    assert.match(list, /^\s+\[\/version\]\s+\[\]\s+\[get\]/m);
  });

  it('the aggregated view role: list but not create; service accounts by --as', async () => {
    await ok('create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob', '-n', 'team');
    await pollUntil('view aggregated', async () => (await canI('list', 'deployments.apps', '-n', 'team', '--as', 'bob')) === 'yes', { timeoutMs: 15_000, intervalMs: 25 });
    assert.equal(await canI('create', 'deployments.apps', '-n', 'team', '--as', 'bob'), 'no');
    assert.equal(await canI('get', 'secrets', '-n', 'team', '--as', 'bob'), 'no', 'view does not read secrets');
    const sa = 'system:serviceaccount:team:builder';
    assert.equal(await canI('list', 'pods', '-n', 'team', `--as=${sa}`), 'no');
    await ok('create', 'rolebinding', 'builder-edit', '--clusterrole=edit', '--serviceaccount=team:builder', '-n', 'team');
    assert.equal(await canI('create', 'deployments.apps', '-n', 'team', `--as=${sa}`), 'yes');
    assert.equal(await canI('create', 'deployments.apps', '-n', 'default', `--as=${sa}`), 'no');
    const whoami = await ok('auth', 'whoami', `--as=${sa}`, '-o', 'json');
    assert.deepEqual(JSON.parse(whoami).status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']);
  });

  it('escalation is refused; binding what you hold is not', async () => {
    // carol may manage roles and bindings in team, and read pods — nothing else.
    await ok('create', 'role', 'rbac-manager', '--verb=get,list,create,update,delete', '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io', '-n', 'team');
    await ok('create', 'rolebinding', 'carol-rbac-2', '--role=rbac-manager', '--user=carol', '-n', 'team');
    await ok('create', 'rolebinding', 'carol-pods', '--role=pod-reader', '--user=carol', '-n', 'team');
    const boom = await k(['create', 'role', 'pod-deleter', '--verb=delete', '--resource=pods', '-n', 'team', '--as', 'carol']);
    assert.notEqual(boom.code, 0);
    assert.match(boom.stderr, /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["delete"\]\}/);
    const admin = await k(['create', 'rolebinding', 'carol-admin', '--clusterrole=admin', '--user=carol', '-n', 'team', '--as', 'carol']);
    assert.notEqual(admin.code, 0);
    assert.match(admin.stderr, /attempting to grant RBAC permissions not currently held/);
    assert.equal((await k(['create', 'rolebinding', 'dave-reads', '--role=pod-reader', '--user=dave', '-n', 'team', '--as', 'carol'])).code, 0);
    // cluster-wide: clusterrole + clusterrolebinding
    await ok('create', 'clusterrole', 'node-reader', '--verb=get,list', '--resource=nodes');
    await ok('create', 'clusterrolebinding', 'ops-node-reader', '--clusterrole=node-reader', '--group=ops');
    assert.equal(await canI('list', 'nodes', '--as', 'erin', '--as-group', 'ops'), 'yes');
    assert.equal(await canI('list', 'nodes', '--as', 'erin'), 'no');
    // Impersonation needs a valid credential first. (The admin kubeconfig holds a client
    // certificate, which would authenticate before a bad --token is looked at, as upstream: so a
    // kubeconfig with only the bad token.)
    const badToken = join(env.dir, 'bad-token.kubeconfig');
    await writeFile(badToken, formatKubeconfig({ server: env.cp.url, caData: env.cp.caPem, token: 'x' }), { mode: 0o600 });
    const imp = await k(['--kubeconfig', badToken, 'get', 'pods', '-n', 'team', '--as', 'alice']);
    assert.notEqual(imp.code, 0);
    assert.match(imp.stderr, /Unauthorized|must be logged in/);
  });

  it('nodelet kubeconfig create: a client-certificate user that has exactly what its group is bound to', async () => {
    const out = join(env.dir, 'gina.kubeconfig');
    await createUserKubeconfig({ adminKubeconfig: env.cp.kubeconfigPath, user: 'gina', groups: ['qa'], days: 30, out });
    assert.equal((await stat(out)).mode & 0o777, 0o600);
    const gina = (...args: string[]) => k(['--kubeconfig', out, ...args]);
    const whoami = JSON.parse((await gina('auth', 'whoami', '-o', 'json')).stdout);
    assert.deepEqual(whoami.status.userInfo, { username: 'gina', groups: ['qa', 'system:authenticated'] });
    const denied = await gina('get', 'pods', '-n', 'team');
    assert.match(denied.stderr, /User "gina" cannot list resource "pods"/);
    await ok('create', 'rolebinding', 'qa-view', '--clusterrole=view', '--group=qa', '-n', 'team');
    assert.equal((await gina('get', 'pods', '-n', 'team')).code, 0);
    assert.notEqual((await gina('create', 'configmap', 'x', '-n', 'team')).code, 0);
    const csrs = await ok('get', 'csr');
    assert.match(csrs, /user-gina-\S+\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+kubernetes-admin\s+30d\s+Approved,Issued/);
  });

  it('auth reconcile creates, then leaves a role and binding unchanged', async () => {
    const manifest = join(env.dir, 'rbac.yaml');
    await writeFile(manifest, [
      'apiVersion: rbac.authorization.k8s.io/v1', 'kind: Role', 'metadata: {name: cm-editor, namespace: team}',
      'rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list, create, update]}]', '---',
      'apiVersion: rbac.authorization.k8s.io/v1', 'kind: RoleBinding', 'metadata: {name: frank-cm, namespace: team}',
      'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-editor}', 'subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: frank}]', '',
    ].join('\n'));
    const first = await ok('auth', 'reconcile', '-f', manifest);
    assert.match(first, /role\.rbac\.authorization\.k8s\.io\/cm-editor reconciled/);
    assert.match(first, /rolebinding\.rbac\.authorization\.k8s\.io\/frank-cm reconciled/);
    assert.equal(await canI('create', 'configmaps', '-n', 'team', '--as', 'frank'), 'yes');
    const second = await ok('auth', 'reconcile', '-f', manifest);
    assert.match(second, /cm-editor reconciled/);
    assert.equal(JSON.parse(await ok('get', 'role', 'cm-editor', '-n', 'team', '-o', 'json')).rules.length, 1);
  });
});
