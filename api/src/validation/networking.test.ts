import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultNetworkPolicy, validateIngress, validateIngressClass, validateNetworkPolicy } from './networking.js';

const messages = (errs: Array<{ field: string; message: string }>): string[] => errs.map((e) => `${e.field}: ${e.message}`);
const svc = (name: string, port: Record<string, unknown> = { number: 80 }): Record<string, unknown> => ({ service: { name, port } });

test('Ingress: rules or a default backend, hosts, path types and paths, backends, class annotation', () => {
  const path = (p: Record<string, unknown>): Record<string, unknown> => ({ rules: [{ host: 'a.example.com', http: { paths: [p] } }] });
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['valid', path({ path: '/', pathType: 'Prefix', backend: svc('web') }), []],
    ['valid default backend', { defaultBackend: svc('web', { name: 'http' }) }, []],
    ['empty', {}, ['spec: Invalid value: null: either `defaultBackend` or `rules` must be specified']],
    ['no pathType', path({ path: '/', backend: svc('web') }), ['spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified']],
    ['bad pathType', path({ path: '/', pathType: 'Glob', backend: svc('web') }),
      ['spec.rules[0].http.paths[0].pathType: Unsupported value: "Glob": supported values: "Exact", "ImplementationSpecific", "Prefix"']],
    ['relative', path({ path: 'x', pathType: 'Exact', backend: svc('web') }), ['spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path']],
    ['dot dot', path({ path: '/a/../b', pathType: 'Prefix', backend: svc('web') }), ["spec.rules[0].http.paths[0].path: Invalid value: \"/a/../b\": must not contain '/../'"]],
    ['both backends', path({ path: '/', pathType: 'Prefix', backend: { ...svc('web'), resource: { kind: 'B', name: 'b' } } }),
      ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends']],
    ['no port', path({ path: '/', pathType: 'Prefix', backend: svc('web', {}) }), ['spec.rules[0].http.paths[0].backend: Required value: port name or number is required']],
    ['both ports', path({ path: '/', pathType: 'Prefix', backend: svc('web', { name: 'http', number: 80 }) }),
      ['spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number']],
    ['IP host', { rules: [{ host: '10.0.0.1' }] }, ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']],
    ['empty paths', { rules: [{ host: 'a.b', http: { paths: [] } }] }, ['spec.rules[0].http.paths: Required value']],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(messages(validateIngress({ spec })), want, what);
  const wildcard = validateIngress({ spec: { rules: [{ host: 'a.*.com' }] } });
  assert.match(messages(wildcard)[0] ?? '', /^spec\.rules\[0\]\.host: Invalid value: "a\.\*\.com": a wildcard DNS-1123 subdomain must start with '\*\.'/);
  assert.deepEqual(validateIngress({ spec: { rules: [{ host: '*.example.com' }] } }), []);
  const clash = { metadata: { annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, spec: { ingressClassName: 'other', defaultBackend: svc('web') } };
  assert.deepEqual(messages(validateIngress(clash)), ['annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified']);
  assert.deepEqual(validateIngress(clash, clash), [], 'only checked on create, as upstream');
});

test('IngressClass: a domain-prefixed controller, immutable; parameters scope and namespace', () => {
  const ok = { spec: { controller: 'k8s.io/ingress-nginx' } };
  assert.deepEqual(validateIngressClass(ok), []);
  assert.deepEqual(messages(validateIngressClass({ spec: {} })), ['spec.controller: Required value']);
  assert.deepEqual(messages(validateIngressClass({ spec: { controller: 'nginx' } })), ['spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']);
  assert.deepEqual(messages(validateIngressClass({ spec: { controller: 'example.com/other' } }, ok)), ['spec.controller: Invalid value: "example.com/other": field is immutable']);
  const params = (p: Record<string, unknown>): Record<string, unknown> => ({ spec: { controller: 'k8s.io/x', parameters: { kind: 'Cfg', name: 'c', ...p } } });
  assert.deepEqual(messages(validateIngressClass(params({}))), ['spec.parameters.scope: Required value']);
  assert.deepEqual(messages(validateIngressClass(params({ scope: 'Namespace' }))), ["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]);
  assert.deepEqual(messages(validateIngressClass(params({ scope: 'Cluster', namespace: 'x' }))), ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]);
  assert.deepEqual(validateIngressClass(params({ scope: 'Namespace', namespace: 'kube-system' })), []);
});

test('NetworkPolicy: ports and ranges, peers, ipBlock subsets, policyTypes; defaults', () => {
  const ingress = (rule: Record<string, unknown>): Record<string, unknown> => ({ spec: { podSelector: {}, ingress: [rule] } });
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['valid', ingress({ ports: [{ protocol: 'TCP', port: 80, endPort: 90 }], from: [{ podSelector: { matchLabels: { a: 'b' } }, namespaceSelector: {} }] }), []],
    ['bad protocol', ingress({ ports: [{ protocol: 'ICMP' }] }), ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"']],
    ['endPort below', ingress({ ports: [{ port: 90, endPort: 80 }] }), ['spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`']],
    ['endPort named', ingress({ ports: [{ port: 'http', endPort: 80 }] }), ['spec.ingress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is non-numeric']],
    ['endPort alone', ingress({ ports: [{ endPort: 80 }] }), ['spec.ingress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is not specified']],
    ['empty peer', ingress({ from: [{}] }), ['spec.ingress[0].from[0]: Required value: must specify a peer']],
    ['ipBlock and more', ingress({ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }), ['spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer']],
    ['bad cidr', ingress({ from: [{ ipBlock: { cidr: '10.0.0.0' } }] }), ['spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']],
    ['except outside', ingress({ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['11.0.0.0/16', '10.0.0.0/8', '10.1.0.0/16'] } }] }), [
      'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`',
      'spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
    ]],
    ['v6 except', ingress({ from: [{ ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48', '2001:db9::/48'] } }] }),
      ['spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "2001:db9::/48": must be a strict subset of `cidr`']],
    ['bad type', { spec: { policyTypes: ['Both'] } }, ['spec.policyTypes[0]: Unsupported value: "Both": supported values: "Ingress", "Egress"']],
    ['three types', { spec: { policyTypes: ['Ingress', 'Egress', 'Ingress'] } }, ['spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes']],
  ];
  for (const [what, np, want] of cases) assert.deepEqual(messages(validateNetworkPolicy(np)), want, what);
  const np: Record<string, unknown> = { spec: { egress: [{ ports: [{ port: 53 }] }] } };
  defaultNetworkPolicy(np);
  assert.deepEqual(np.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
});
