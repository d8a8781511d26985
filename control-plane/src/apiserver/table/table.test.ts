import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiObject } from '../object.js';
import { humanDuration } from './format.js';
import { NODE_TABLE, POD_TABLE, podStatusReason } from './pods-nodes.js';
import { DEPLOYMENT_TABLE, SERVICE_TABLE } from './others.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

test('humanDuration matches kubectl', () => {
  const s = 1000;
  assert.deepEqual([5 * s, 119 * s, 200 * s, 600 * s, 3 * 3600 * s + 60 * s, 30 * 3600 * s, 3 * 86400 * s + 3600 * s, 400 * 86400 * s].map(humanDuration), ['5s', '119s', '3m20s', '10m', '3h1m', '30h', '3d1h', '400d']);
});

test('pod STATUS follows kubectl: waiting reasons, init progress, Terminating, Completed', () => {
  const pod = (status: object, extra: Partial<ApiObject> = {}): ApiObject => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] }, status, ...extra });
  assert.equal(podStatusReason(pod({ phase: 'Running', containerStatuses: [{ name: 'c', state: { waiting: { reason: 'CrashLoopBackOff' } } }] })), 'CrashLoopBackOff');
  assert.equal(podStatusReason(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'PodInitializing' } } }] }, { spec: { initContainers: [{ name: 'i' }], containers: [] } })), 'Init:0/1');
  assert.equal(podStatusReason(pod({ phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { reason: 'Completed', exitCode: 0 } } }] })), 'Completed');
  assert.equal(podStatusReason(pod({ phase: 'Running' }, { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' } })), 'Terminating');
  const row = POD_TABLE.cells(
    pod({ phase: 'Running', podIP: '10.244.0.5', containerStatuses: [{ name: 'c', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { finishedAt: '2026-01-01T11:55:00Z' } } }] }, {
      metadata: { name: 'p', creationTimestamp: '2026-01-01T11:00:00Z' },
      spec: { nodeName: 'node-1', containers: [{ name: 'c' }] },
    }),
    NOW,
  );
  assert.deepEqual(row, ['p', '1/1', 'Running', '2 (5m ago)', '60m', '10.244.0.5', 'node-1', '<none>', '<none>']);
  assert.deepEqual(POD_TABLE.columns.filter((c) => c.priority === 1).map((c) => c.name), ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
});

test('node STATUS and ROLES', () => {
  const node: ApiObject = {
    metadata: { name: 'n', creationTimestamp: '2026-01-01T11:59:00Z', labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' } },
    spec: { unschedulable: true },
    status: { conditions: [{ type: 'Ready', status: 'False' }], nodeInfo: { kubeletVersion: 'v1.32.0' } },
  };
  assert.deepEqual(NODE_TABLE.cells(node, NOW).slice(0, 5), ['n', 'NotReady,SchedulingDisabled', 'control-plane,worker', '60s', 'v1.32.0']);
  // A node the lifecycle controller marked Unknown reads NotReady; only a missing condition reads Unknown.
  const silent: ApiObject = { metadata: { name: 's' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
  assert.equal(NODE_TABLE.cells(silent, NOW)[1], 'NotReady');
  assert.equal(NODE_TABLE.cells({ metadata: { name: 'new' } }, NOW)[1], 'Unknown');
});

test('deployment and service rows', () => {
  const dep: ApiObject = {
    metadata: { name: 'd', creationTimestamp: '2026-01-01T12:00:00Z' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'd' } }, template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } },
    status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  };
  assert.deepEqual(DEPLOYMENT_TABLE.cells(dep, NOW), ['d', '2/3', 3, 2, '0s', 'a', 'x:1', 'app=d']);
  const svc: ApiObject = { metadata: { name: 's', creationTimestamp: '2026-01-01T12:00:00Z' }, spec: { type: 'NodePort', clusterIP: '10.96.0.2', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }], selector: { app: 's' } } };
  assert.deepEqual(SERVICE_TABLE.cells(svc, NOW), ['s', 'NodePort', '10.96.0.2', '<none>', '80:30080/TCP', '0s', 'app=s']);
});

test('a LoadBalancer row shows <pending> until it has an address, then its ingress IPs and externalIPs (kubectl getServiceExternalIP)', () => {
  const lb = (status: ApiObject['status'], externalIPs?: string[]): ApiObject => ({
    metadata: { name: 'l', creationTimestamp: '2026-01-01T12:00:00Z' },
    spec: { type: 'LoadBalancer', clusterIP: '10.96.0.3', ports: [{ port: 80, nodePort: 30081, protocol: 'TCP' }], ...(externalIPs ? { externalIPs } : {}) },
    status,
  });
  assert.equal(SERVICE_TABLE.cells(lb({ loadBalancer: {} }), NOW)[3], '<pending>');
  assert.equal(SERVICE_TABLE.cells(lb({ loadBalancer: { ingress: [{ ip: '192.168.240.1' }] } }, ['203.0.113.9']), NOW)[3], '192.168.240.1,203.0.113.9');
  assert.equal(SERVICE_TABLE.cells(lb({ loadBalancer: {} }, ['203.0.113.9']), NOW)[3], '203.0.113.9');
});
