// The real kubectl 1.32 reading the server's /openapi/v2 (protobuf): `kubectl apply -f` of a
// `kind: List`, whose items kubectl validates on the client against the v2 models before applying
// each, and the round trip of `kubectl get … -o yaml` back through `kubectl apply`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const list = (cmData: string): string => `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed, namespace: default}
  ${cmData}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: listed, namespace: default}
  spec:
    replicas: 1
    selector: {matchLabels: {app: listed}}
    template:
      metadata: {labels: {app: listed}}
      spec: {containers: [{name: c, image: busybox:1.36, ports: [{containerPort: 80}]}]}
`;

describe('kubectl apply of a List, validated against /openapi/v2', { skip }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(() => env?.close());

  it('apply -f list.yaml creates each item, a second apply leaves both unchanged', async () => {
    const k = await env.newKubectl();
    const first = await k(['apply', '-f', '-', '-v=6'], { stdin: list('data: {a: "1"}') });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^configmap\/listed created$/m);
    assert.match(first.stdout, /^deployment\.apps\/listed created$/m);
    assert.match(first.stderr, /GET https:\/\/[^ ]+\/openapi\/v2\?timeout=\S+ 200 OK/);
    const again = await k(['apply', '-f', '-'], { stdin: list('data: {a: "1"}') });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^configmap\/listed unchanged$/m);
    assert.match(again.stdout, /^deployment\.apps\/listed unchanged$/m);
    const changed = await k(['apply', '-f', '-'], { stdin: list('data: {a: "2"}') });
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /^configmap\/listed configured$/m);
    assert.equal((await k(['get', 'cm', 'listed', '-o', 'jsonpath={.data.a}'])).stdout, '2');
  });

  it('an item with an unknown field is refused on the client from the v2 models; nothing is applied', async () => {
    const k = await env.newKubectl();
    const bad = list('data: {a: "1"}').replace('name: listed, namespace', 'name: bad, namespace').replace('image: busybox:1.36,', 'image: busybox:1.36, imagePullPolice: Always,');
    const r = await k(['apply', '-f', '-'], { stdin: bad });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "imagePullPolice" in io\.k8s\.api\.core\.v1\.Container/);
    assert.equal((await k(['get', 'cm', 'bad', '--ignore-not-found', '-o', 'name'])).stdout, '');
  });

  it('get configmaps,deployments -o yaml | apply -f - round-trips every object', async () => {
    const k = await env.newKubectl();
    const yaml = await k(['get', 'configmaps,deployments', '-o', 'yaml']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /^kind: List$/m);
    const r = await k(['apply', '-f', '-'], { stdin: yaml.stdout });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^configmap\/listed (unchanged|configured)$/m);
    assert.match(r.stdout, /^configmap\/kube-root-ca\.crt (unchanged|configured)$/m);
    assert.match(r.stdout, /^deployment\.apps\/listed (unchanged|configured)$/m);
    assert.equal((await k(['get', 'cm', 'listed', '-o', 'jsonpath={.data.a}'])).stdout, '2');
  });

  it('explain and server-side --validate=strict of a single object still work', async () => {
    const k = await env.newKubectl();
    const explain = await k(['explain', 'deployment.spec.strategy']);
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout, /^GROUP:\s+apps$/m);
    const one = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict, namespace: default}\ndatta: {a: "1"}\n';
    const r = await k(['apply', '--validate=strict', '-f', '-'], { stdin: one });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /strict decoding error: unknown field "datta"/);
  });
});
