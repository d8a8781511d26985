// The real kubectl 1.32's server-side apply against the in-process server: managed fields,
// removal of a field dropped from the file, conflicts with another manager and
// --force-conflicts, and the upgrade of an object kubectl applied client-side; and a controller's
// apply through @kubernetes/client-node.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import * as k8s from '@kubernetes/client-node';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

interface Entry {
  manager: string;
  operation: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}

const deployment = (o: { replicas?: number; tier?: boolean; env?: boolean }): string =>
  YAML.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ssa', namespace: 'default', labels: { app: 'ssa', ...(o.tier ? { tier: 'web' } : {}) } },
    spec: {
      ...(o.replicas === undefined ? {} : { replicas: o.replicas }),
      selector: { matchLabels: { app: 'ssa' } },
      template: {
        metadata: { labels: { app: 'ssa' } },
        spec: { containers: [{ name: 'main', image: 'busybox:1.36', ...(o.env ? { env: [{ name: 'MODE', value: 'x' }] } : {}) }] },
      },
    },
  });

describe('kubectl apply --server-side', { skip }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(() => env?.close());

  it('creates, records managed fields, removes what the file drops, conflicts with kubectl scale, --force-conflicts takes over', async () => {
    const k = await env.newKubectl();
    const first = await k(['apply', '--server-side', '-f', '-'], { stdin: deployment({ replicas: 2, tier: true, env: true }) });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^deployment\.apps\/ssa serverside-applied$/m);
    const created = JSON.parse((await k(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields'])).stdout);
    const applied = (created.metadata.managedFields as Entry[]).find((e) => e.manager === 'kubectl' && e.operation === 'Apply');
    assert.ok(applied, JSON.stringify(created.metadata.managedFields));
    const spec = applied.fieldsV1['f:spec'] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.deepEqual(spec['f:replicas'], {});
    assert.deepEqual(spec['f:template']['f:spec']['f:containers']['k:{"name":"main"}']['f:env']['k:{"name":"MODE"}'], { '.': {}, 'f:name': {}, 'f:value': {} });
    assert.equal((await k(['get', 'deploy', 'ssa', '-o', 'yaml'])).stdout.includes('managedFields'), false, 'hidden unless asked for');

    const dropped = await k(['apply', '--server-side', '-f', '-'], { stdin: deployment({ replicas: 2 }) });
    assert.equal(dropped.code, 0, dropped.stderr);
    const after = JSON.parse((await k(['get', 'deploy', 'ssa', '-o', 'json'])).stdout);
    assert.equal(after.metadata.labels.tier, undefined);
    assert.equal(after.spec.template.spec.containers[0].env, undefined);
    assert.equal(after.spec.replicas, 2);

    const scaled = await k(['scale', 'deploy', 'ssa', '--replicas=5']);
    assert.equal(scaled.code, 0, scaled.stderr);
    const conflict = await k(['apply', '--server-side', '-f', '-'], { stdin: deployment({ replicas: 3 }) });
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas/);
    assert.equal(JSON.parse((await k(['get', 'deploy', 'ssa', '-o', 'json'])).stdout).spec.replicas, 5);

    const forced = await k(['apply', '--server-side', '--force-conflicts', '-f', '-'], { stdin: deployment({ replicas: 3 }) });
    assert.equal(forced.code, 0, forced.stderr);
    const taken = JSON.parse((await k(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.equal(taken.spec.replicas, 3);
    assert.equal((taken.metadata.managedFields as Entry[]).some((e) => e.subresource === 'scale'), false, 'the scaler lost .spec.replicas, its only field');
  });

  it('the same value applied by two managers is shared; a second field manager conflicts only on a change', async () => {
    const k = await env.newKubectl();
    const cm = (data: Record<string, string>): string => YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: 'default' }, data });
    assert.equal((await k(['apply', '--server-side', '-f', '-'], { stdin: cm({ a: '1', b: '2' }) })).code, 0);
    const same = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], { stdin: cm({ a: '1' }) });
    assert.equal(same.code, 0, same.stderr);
    const changed = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], { stdin: cm({ a: '9' }) });
    assert.match(changed.stderr, /conflict with "kubectl": \.data\.a/);
    // kubectl drops a: other still applies it, so it stays.
    assert.equal((await k(['apply', '--server-side', '-f', '-'], { stdin: cm({ b: '2' }) })).code, 0);
    assert.deepEqual(JSON.parse((await k(['get', 'cm', 'shared', '-o', 'json'])).stdout).data, { a: '1', b: '2' });
  });

  it('upgrades an object applied client-side: a changed field is no conflict, the file’s dropped field goes', async () => {
    const k = await env.newKubectl();
    const cm = (data: Record<string, string>): string => YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'csa', namespace: 'default' }, data });
    assert.equal((await k(['apply', '-f', '-'], { stdin: cm({ a: '1', b: '2' }) })).code, 0);
    const before = JSON.parse((await k(['get', 'cm', 'csa', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.ok((before.metadata.managedFields as Entry[]).some((e) => e.manager === 'kubectl-client-side-apply' && e.operation === 'Update'));
    // a changes: kubectl-client-side-apply owns it, but the annotation says kubectl set it, so no conflict.
    const r = await k(['apply', '--server-side', '-f', '-'], { stdin: cm({ a: '3' }) });
    assert.equal(r.code, 0, r.stderr);
    const up = JSON.parse((await k(['get', 'cm', 'csa', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.deepEqual(up.data, { a: '3' });
    assert.equal((up.metadata.managedFields as Entry[]).some((e) => e.manager === 'kubectl-client-side-apply'), false, JSON.stringify(up.metadata.managedFields));
  });

  it('ports key by port and the defaulted protocol: applying the same Service twice writes nothing the second time', async () => {
    const k = await env.newKubectl();
    const svc = YAML.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
    assert.equal((await k(['apply', '--server-side', '-f', '-'], { stdin: svc })).code, 0);
    const first = JSON.parse((await k(['get', 'svc', 'web', '-o', 'json', '--show-managed-fields'])).stdout);
    const applied = (first.metadata.managedFields as Entry[]).find((e) => e.manager === 'kubectl')!;
    assert.deepEqual(Object.keys((applied.fieldsV1['f:spec'] as Record<string, Record<string, unknown>>)['f:ports']!), ['k:{"port":80,"protocol":"TCP"}']);
    const again = await k(['apply', '--server-side', '-f', '-'], { stdin: svc });
    assert.equal(again.code, 0, again.stderr);
    const second = JSON.parse((await k(['get', 'svc', 'web', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
    assert.deepEqual(second.spec.ports, first.spec.ports);
  });

  it('@kubernetes/client-node: apply with a fieldManager, 409 conflict with its causes, force', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${env.cp.port}`, caData: Buffer.from(env.cp.caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'admin', token: env.cp.adminToken }],
      contexts: [{ name: 'c', cluster: 'c', user: 'admin' }],
      currentContext: 'c',
    });
    const api = k8s.KubernetesObjectApi.makeApiClient(kc);
    const cm = (manager: string, v: string): k8s.V1ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ctrl', namespace: 'default' }, data: { [manager]: v, shared: v } });
    const one = await api.patch(cm('one', '1'), undefined, undefined, 'one', false, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((one as k8s.V1ConfigMap).data, { one: '1', shared: '1' });
    const err = await api.patch(cm('two', '2'), undefined, undefined, 'two', false, k8s.PatchStrategy.ServerSideApply).then(
      () => assert.fail('no conflict'),
      (e: k8s.ApiException<string>) => e,
    );
    assert.equal(err.code, 409);
    const status = JSON.parse(err.body);
    assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "one": .data.shared');
    assert.deepEqual(status.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.data.shared' }]);
    const forced = await api.patch(cm('two', '2'), undefined, undefined, 'two', true, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((forced as k8s.V1ConfigMap).data, { one: '1', two: '2', shared: '2' });
    const owners = (forced.metadata?.managedFields ?? []).map((e: k8s.V1ManagedFieldsEntry) => [e.manager, Object.keys((e.fieldsV1 as { 'f:data': object })['f:data'])]);
    assert.deepEqual(owners, [['one', ['f:one']], ['two', ['f:shared', 'f:two']]]);
  });
});
