import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchingResources, objectUsage, podConstraintProblem, podUsage } from './evaluator.js';
import { addLists, exceededNames, printList, subtractLists } from './resource-list.js';
import type { ResourceQuota } from '../types/quota.js';

const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({ name, image: 'x', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });
const pod = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => ({ metadata: { name: 'p' }, spec, status });

test('pod usage: requests (bare names too), limits, init containers, overhead, terminal pods', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, string>]> = [
    ['best effort', pod({ containers: [container('a')] }), { 'count/pods': '1', pods: '1' }],
    ['two containers summed', pod({ containers: [container('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' }), container('b', { cpu: '150m', memory: '64Mi' })] }),
      { 'count/pods': '1', pods: '1', cpu: '250m', 'requests.cpu': '250m', memory: '128Mi', 'requests.memory': '128Mi', 'limits.cpu': '200m' }],
    ['an init container above the sum counts', pod({ containers: [container('a', { cpu: '100m' })], initContainers: [container('i', { cpu: '1' })] }), { 'count/pods': '1', pods: '1', cpu: '1', 'requests.cpu': '1' }],
    ['overhead added', pod({ containers: [container('a', { cpu: '100m' })], overhead: { cpu: '50m' } }), { 'count/pods': '1', pods: '1', cpu: '150m', 'requests.cpu': '150m' }],
    ['succeeded pod: only count/pods', pod({ containers: [container('a', { cpu: '1' })] }, { phase: 'Succeeded' }), { 'count/pods': '1' }],
    ['failed pod: only count/pods', pod({ containers: [container('a', { cpu: '1' })] }, { phase: 'Failed' }), { 'count/pods': '1' }],
  ];
  for (const [what, p, want] of cases) assert.deepEqual(podUsage(p, 0), want, what);
});

test('object usage: services by type, claims by class, counts of any kind', () => {
  const svc = (type: string, ports = 2) => ({ metadata: {}, spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) } });
  assert.deepEqual(objectUsage('', 'services', svc('ClusterIP'), 0), { 'count/services': '1', services: '1' });
  assert.deepEqual(objectUsage('', 'services', svc('NodePort'), 0), { 'count/services': '1', services: '1', 'services.nodeports': '2' });
  assert.deepEqual(objectUsage('', 'services', svc('LoadBalancer', 1), 0), { 'count/services': '1', services: '1', 'services.loadbalancers': '1', 'services.nodeports': '1' });
  assert.deepEqual(objectUsage('', 'persistentvolumeclaims', { metadata: {}, spec: { storageClassName: 'gold', resources: { requests: { storage: '1Gi' } } } }, 0), {
    'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1', 'requests.storage': '1Gi',
    'gold.storageclass.storage.k8s.io/requests.storage': '1Gi', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
  });
  assert.deepEqual(objectUsage('apps', 'deployments', { metadata: {} }, 0), { 'count/deployments.apps': '1' });
  assert.deepEqual(objectUsage('', 'secrets', { metadata: {} }, 0), { 'count/secrets': '1', secrets: '1' });
});

test('scopes: which quotas a pod matches, and only pods match scoped quotas', () => {
  const quota = (scopes: string[], hard: Record<string, string> = { pods: '5', 'requests.cpu': '1' }, matchExpressions?: unknown[]): ResourceQuota =>
    ({ metadata: {}, spec: { hard, scopes, ...(matchExpressions ? { scopeSelector: { matchExpressions } } : {}) } }) as ResourceQuota;
  const besteffort = pod({ containers: [container('a')] });
  const burstable = pod({ containers: [container('a', { cpu: '100m' })], activeDeadlineSeconds: 10, priorityClassName: 'high' });
  const cases: Array<[string, ResourceQuota, Record<string, unknown>, string[]]> = [
    ['no scope: pod resources', quota([]), burstable, ['pods', 'requests.cpu']],
    ['BestEffort matches a best-effort pod, pods only', quota(['BestEffort'], { pods: '5' }), besteffort, ['pods']],
    ['BestEffort skips a burstable pod', quota(['BestEffort'], { pods: '5' }), burstable, []],
    ['NotBestEffort', quota(['NotBestEffort']), burstable, ['pods', 'requests.cpu']],
    ['Terminating', quota(['Terminating']), burstable, ['pods', 'requests.cpu']],
    ['NotTerminating skips a pod with a deadline', quota(['NotTerminating']), burstable, []],
    ['PriorityClass In', quota([], undefined, [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }]), burstable, ['pods', 'requests.cpu']],
    ['PriorityClass NotIn', quota([], undefined, [{ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }]), burstable, []],
    ['PriorityClass DoesNotExist', quota([], undefined, [{ scopeName: 'PriorityClass', operator: 'DoesNotExist' }]), besteffort, ['pods', 'requests.cpu']],
  ];
  for (const [what, q, p, want] of cases) assert.deepEqual(matchingResources(q, '', 'pods', p), want, what);
  assert.deepEqual(matchingResources(quota(['Terminating'], { services: '1' }), '', 'services', { spec: {} }), [], 'a scoped quota counts no service');
  assert.deepEqual(matchingResources(quota([], { services: '1', pods: '1' }), '', 'services', { spec: {} }), ['services']);
});

test('constraints: the containers lacking a constrained request or limit, per resource', () => {
  const p = pod({ containers: [container('a', { cpu: '1' }), container('b')], initContainers: [container('i', undefined, { cpu: '1' })] });
  assert.equal(podConstraintProblem(p, ['requests.cpu', 'limits.cpu', 'pods']), 'must specify limits.cpu for: a,b; requests.cpu for: i,b');
  assert.equal(podConstraintProblem(p, ['pods']), undefined);
  assert.equal(podConstraintProblem(p, ['memory']), 'must specify memory for: i,a,b');
});

test('resource lists: sums keep the format, the exceeded names and upstream’s printing', () => {
  assert.deepEqual(addLists({ memory: '128Mi', cpu: '500m' }, { memory: '128Mi', cpu: '600m', pods: '1' }), { memory: '256Mi', cpu: '1100m', pods: '1' });
  assert.deepEqual(subtractLists({ cpu: '1' }, { cpu: '250m' }), { cpu: '750m' });
  assert.deepEqual(exceededNames({ pods: '3', cpu: '1' }, { pods: '2', cpu: '2' }), ['pods']);
  assert.equal(printList({ pods: '1', cpu: '2' }, ['cpu', 'pods']), 'cpu=2,pods=1');
});
