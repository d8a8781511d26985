// The real kubectl against the server's networking.k8s.io/v1 kinds: `kubectl create ingress` (protobuf)
// filled with the default IngressClass, `kubectl get ingress,ingressclass,netpol` with upstream's
// columns, a NetworkPolicy write answered with the not-enforced Warning, and validation refusals.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const INGRESS_CLASS = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: k8s.io/ingress-nginx}
`;

const NETPOL = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-in}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]
    ports: [{port: 80}]
`;

describe('networking.k8s.io/v1 with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv();
    k = await env.newKubectl();
    assert.equal((await k(['create', 'ns', 'net'])).code, 0);
  });
  after(() => env?.close());

  it('kubectl create ingress gets the default class; get shows upstream’s columns', async () => {
    const ic = await k(['apply', '-f', '-'], { stdin: INGRESS_CLASS });
    assert.equal(ic.code, 0, ic.stderr);
    const created = await k(['-n', 'net', 'create', 'ingress', 'web', '--rule=a.example.com/*=web:80,tls=web-cert', '--rule=b.example.com/api=api:http']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^ingress\.networking\.k8s\.io\/web created$/m);
    const cls = await k(['-n', 'net', 'get', 'ingress', 'web', '-o', 'jsonpath={.spec.ingressClassName} {.spec.rules[0].http.paths[0].pathType} {.spec.rules[1].http.paths[0].backend.service.port.name}']);
    assert.equal(cls.stdout, 'nginx Prefix http');
    const table = await k(['-n', 'net', 'get', 'ing']);
    assert.match(table.stdout, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/m);
    assert.match(table.stdout, /^web\s+nginx\s+a\.example\.com,b\.example\.com\s+80, 443\s+\S+$/m);
    const classes = await k(['get', 'ingressclass']);
    assert.match(classes.stdout, /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE$/m);
    assert.match(classes.stdout, /^nginx\s+k8s\.io\/ingress-nginx\s+<none>\s+\S+$/m);
    const status = await env.api('PATCH', '/apis/networking.k8s.io/v1/namespaces/net/ingresses/web/status', {
      body: JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(status.status, 200, status.body);
    assert.match((await k(['-n', 'net', 'get', 'ing', 'web'])).stdout, /^web\s+nginx\s+\S+\s+192\.0\.2\.10\s+80, 443\s+\S+$/m);
  });

  it('an invalid Ingress is refused with upstream’s message', async () => {
    const bad = await k(['-n', 'net', 'create', '-f', '-'], {
      stdin: 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad}\nspec:\n  rules: [{host: 10.0.0.1, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web}}}]}}]\n',
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.rules\[0\]\.host: Invalid value: "10\.0\.0\.1": must be a DNS name, not an IP address/);
    assert.match(bad.stderr, /spec\.rules\[0\]\.http\.paths\[0\]\.backend: Required value: port name or number is required/);
  });

  it('a NetworkPolicy is stored, defaulted and shown; writes answer no warning (the agents enforce it, docs/network.md)', async () => {
    const created = await k(['-n', 'net', 'create', '-f', '-'], { stdin: NETPOL });
    assert.equal(created.code, 0, created.stderr);
    assert.doesNotMatch(created.stderr, /Warning/);
    const got = await k(['-n', 'net', 'get', 'netpol', 'deny-in', '-o', 'jsonpath={.spec.policyTypes} {.spec.ingress[0].ports[0].protocol}']);
    assert.equal(got.stdout, '["Ingress"] TCP');
    const table = await k(['-n', 'net', 'get', 'networkpolicies']);
    assert.match(table.stdout, /^NAME\s+POD-SELECTOR\s+AGE$/m);
    assert.match(table.stdout, /^deny-in\s+app=web\s+\S+$/m);
    const labelled = await k(['-n', 'net', 'label', 'netpol', 'deny-in', 'x=y']);
    assert.equal(labelled.code, 0, labelled.stderr);
    assert.doesNotMatch(labelled.stderr, /Warning/);
    const bad = await k(['-n', 'net', 'create', '-f', '-'], { stdin: NETPOL.replace('deny-in', 'bad').replace('10.1.0.0/16', '11.0.0.0/16') });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.ingress\[0\]\.from\[0\]\.ipBlock\.except\[0\]: Invalid value: "11\.0\.0\.0\/16": must be a strict subset of `cidr`/);
  });
});
