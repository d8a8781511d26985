// The audit policy against kube-apiserver's documented semantics (audit.k8s.io/v1 Policy,
// k8s.io/apiserver pkg/audit/policy checker and pkg/apis/audit/validation).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePolicy, parseAuditPolicy, type AuditAttributes } from './policy.js';

const policy = (rules: string, extra = ''): string => `apiVersion: audit.k8s.io/v1\nkind: Policy\n${extra}rules:\n${rules}`;
const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const pods = (verb: string, o: Partial<NonNullable<AuditAttributes['resource']>> = {}, user = alice): AuditAttributes => ({
  user, verb, path: '/api/v1/namespaces/default/pods', resource: { group: '', resource: 'pods', namespace: 'default', ...o },
});
const nonResource = (path: string, verb = 'get'): AuditAttributes => ({ user: alice, verb, path });

describe('audit policy: validation', () => {
  const fails = (text: string, re: RegExp): void => assert.throws(() => parseAuditPolicy(text), re);

  it('accepts upstream\'s example rules', () => {
    const p = parseAuditPolicy(policy(`
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
    resources:
      - group: ""
        resources: ["endpoints", "services"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["pods/log", "pods/status"]
  - level: None
    resources:
      - group: ""
        resources: ["configmaps"]
        resourceNames: ["controller-leader"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    omitStages: [RequestReceived]
    omitManagedFields: true
`, 'omitStages:\n  - "RequestReceived"\n'));
    assert.equal(p.rules.length, 5);
    assert.deepEqual(p.omitStages, ['RequestReceived']);
    assert.equal(p.rules[4]!.omitManagedFields, true);
  });

  it('names each problem with its field path', () => {
    fails(policy('  - level: Everything\n'), /rules\[0\]\.level: Unsupported value: "Everything"/);
    fails(policy('  - verbs: [get]\n'), /rules\[0\]\.level: Required value/);
    fails(policy('  - level: None\n    omitStages: [Started]\n'), /rules\[0\]\.omitStages\[0\]: Invalid value: "Started": allowed stages are/);
    fails(policy('  - level: None\n    nonResourceURLs: ["healthz"]\n'), /must begin with a '\/' character/);
    fails(policy('  - level: None\n    nonResourceURLs: ["/he*lthz"]\n'), /wildcards '\*' must be the final character/);
    fails(policy('  - level: None\n    nonResourceURLs: ["/x"]\n    namespaces: [default]\n'), /cannot apply to both regular resources and non-resource URLs/);
    fails(policy('  - level: None\n    resources: [{group: "apps/v1", resources: [deployments]}]\n'), /rules\[0\]\.resources\[0\]\.group: Invalid value: "apps\/v1"/);
    fails(policy('  - level: None\n    resources: [{group: "", resourceNames: [x]}]\n'), /using resourceNames requires at least one resource/);
  });

  it('refuses unknown fields, a wrong kind or version, and a policy without rules', () => {
    fails(policy('  - level: None\n    namespace: [default]\n'), /rules\[0\]\.namespace: unknown field/);
    fails('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n', /apiVersion: Unsupported value/);
    fails('apiVersion: audit.k8s.io/v1\nkind: Polcy\nrules: [{level: None}]\n', /kind: Unsupported value/);
    fails('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n', /rules: Required value/);
    fails('{ not yaml', /not YAML or JSON/);
  });
});

describe('audit policy: matching', () => {
  it('the first matching rule wins; no match is None', () => {
    const p = parseAuditPolicy(policy('  - level: RequestResponse\n    verbs: [delete]\n  - level: Metadata\n    verbs: [delete, get]\n'));
    assert.equal(evaluatePolicy(p, pods('delete')).level, 'RequestResponse');
    assert.equal(evaluatePolicy(p, pods('get')).level, 'Metadata');
    assert.equal(evaluatePolicy(p, pods('list')).level, 'None');
  });

  it('users match the name, userGroups any group', () => {
    const p = parseAuditPolicy(policy('  - level: Request\n    users: [bob]\n  - level: Metadata\n    userGroups: [devs]\n'));
    assert.equal(evaluatePolicy(p, pods('get', {}, { name: 'bob', groups: [] })).level, 'Request');
    assert.equal(evaluatePolicy(p, pods('get')).level, 'Metadata');
    assert.equal(evaluatePolicy(p, pods('get', {}, { name: 'carol', groups: ['ops'] })).level, 'None');
  });

  it('resources: group, subresources, wildcards and resourceNames', () => {
    const p = parseAuditPolicy(policy(`
  - level: RequestResponse
    resources: [{group: "", resources: ["pods/log"]}]
  - level: Request
    resources: [{group: "", resources: ["*/status"]}]
  - level: Metadata
    resources: [{group: "apps", resources: ["deployments/*"]}]
  - level: Request
    resources: [{group: "", resources: ["configmaps"], resourceNames: ["a"]}]
  - level: Metadata
    resources: [{group: "batch"}]
`));
    assert.equal(evaluatePolicy(p, pods('get', { subresource: 'log' })).level, 'RequestResponse');
    assert.equal(evaluatePolicy(p, pods('get')).level, 'None', 'pods/log does not match pods');
    assert.equal(evaluatePolicy(p, pods('update', { subresource: 'status' })).level, 'Request');
    const deploy = (subresource?: string): AuditAttributes => ({ user: alice, verb: 'get', path: '', resource: { group: 'apps', resource: 'deployments', ...(subresource ? { subresource } : {}) } });
    assert.equal(evaluatePolicy(p, deploy('scale')).level, 'Metadata');
    assert.equal(evaluatePolicy(p, deploy()).level, 'Metadata', 'deployments/* is the resource and each of its subresources');
    const cm = (name?: string): AuditAttributes => ({ user: alice, verb: 'get', path: '', resource: { group: '', resource: 'configmaps', ...(name ? { name } : {}) } });
    assert.equal(evaluatePolicy(p, cm('a')).level, 'Request');
    assert.equal(evaluatePolicy(p, cm('b')).level, 'None');
    assert.equal(evaluatePolicy(p, cm()).level, 'None', 'a list has no name');
    assert.equal(evaluatePolicy(p, { user: alice, verb: 'create', path: '', resource: { group: 'batch', resource: 'jobs' } }).level, 'Metadata', 'a group without resources is all of it');
  });

  it('namespaces: "" selects cluster-scoped objects; such rules never match non-resource requests', () => {
    const p = parseAuditPolicy(policy('  - level: Request\n    namespaces: ["kube-system"]\n  - level: Metadata\n    namespaces: [""]\n'));
    assert.equal(evaluatePolicy(p, pods('get', { namespace: 'kube-system' })).level, 'Request');
    assert.equal(evaluatePolicy(p, { user: alice, verb: 'get', path: '', resource: { group: '', resource: 'nodes', name: 'n1' } }).level, 'Metadata');
    assert.equal(evaluatePolicy(p, pods('get')).level, 'None');
    assert.equal(evaluatePolicy(p, nonResource('/version')).level, 'None');
  });

  it('nonResourceURLs: exact, prefix*, and *; never a resource request', () => {
    const p = parseAuditPolicy(policy('  - level: None\n    nonResourceURLs: ["/healthz*", "/version"]\n  - level: Request\n    nonResourceURLs: ["*"]\n  - level: Metadata\n'));
    assert.equal(evaluatePolicy(p, nonResource('/healthz/etcd')).level, 'None');
    assert.equal(evaluatePolicy(p, nonResource('/version')).level, 'None');
    assert.equal(evaluatePolicy(p, nonResource('/version/x')).level, 'Request');
    assert.equal(evaluatePolicy(p, nonResource('/openapi/v2')).level, 'Request');
    assert.equal(evaluatePolicy(p, pods('get')).level, 'Metadata', 'a non-resource rule skips resource requests');
  });

  it('omitStages add up; omitManagedFields of the rule overrides the policy', () => {
    const p = parseAuditPolicy(policy('  - level: Metadata\n    verbs: [get]\n    omitStages: [ResponseStarted]\n    omitManagedFields: false\n  - level: Metadata\n', 'omitStages: [RequestReceived]\nomitManagedFields: true\n'));
    const get = evaluatePolicy(p, pods('get'));
    assert.deepEqual([...get.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
    assert.equal(get.omitManagedFields, false);
    const list = evaluatePolicy(p, pods('list'));
    assert.deepEqual([...list.omitStages], ['RequestReceived']);
    assert.equal(list.omitManagedFields, true);
  });
});
