import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeSelectorRequirement, Pod, Toleration } from '@nodelet/api';
import {
  nodeAffinity,
  nodeName,
  nodePorts,
  nodeResourcesFit,
  nodeUnschedulable,
  newPodContext,
  requirementMatches,
  runFilters,
  taintToleration,
  type FilterPlugin,
} from './filters.js';
import { newNodeInfo } from './node-info.js';
import { podRequests } from './resources.js';
import { makeNode, makePod } from './testing/objects.js';

function run(plugin: FilterPlugin, pod: ReturnType<typeof makePod>, node: ReturnType<typeof makeNode>, bound: ReturnType<typeof makePod>[] = []) {
  return plugin.filter(newPodContext(pod), newNodeInfo(node, bound));
}

test('NodeName: only the named node passes', () => {
  const cases = [
    { want: undefined, node: 'a', ok: true },
    { want: 'a', node: 'a', ok: true },
    { want: 'b', node: 'a', ok: false },
  ];
  for (const c of cases) {
    const s = run(nodeName, makePod('p', { node: c.want }), makeNode(c.node));
    assert.equal(s === undefined, c.ok, JSON.stringify(c));
    if (s) assert.deepEqual(s.reasons, ["node(s) didn't match the requested node name"]);
  }
});

test('NodeUnschedulable: cordoned nodes reject unless the pod tolerates the unschedulable taint', () => {
  const tol: Toleration = { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };
  const cases = [
    { unschedulable: false, tolerations: [] as Toleration[], ok: true },
    { unschedulable: true, tolerations: [] as Toleration[], ok: false },
    { unschedulable: true, tolerations: [tol], ok: true },
    { unschedulable: true, tolerations: [{ operator: 'Exists' } as Toleration], ok: true },
    { unschedulable: true, tolerations: [{ ...tol, effect: 'NoExecute' } as Toleration], ok: false },
  ];
  for (const c of cases) {
    const s = run(nodeUnschedulable, makePod('p', { spec: { tolerations: c.tolerations } }), makeNode('n', { unschedulable: c.unschedulable }));
    assert.equal(s === undefined, c.ok, JSON.stringify(c));
    if (s) {
      assert.deepEqual(s.reasons, ['node(s) were unschedulable']);
      assert.equal(s.code, 'UnschedulableAndUnresolvable');
    }
  }
});

test('TaintToleration: NoSchedule and NoExecute filter, PreferNoSchedule does not', () => {
  const cases = [
    { taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' as const }], tolerations: [] as Toleration[], reason: 'node(s) had untolerated taint {a: b}' },
    { taints: [{ key: 'a', effect: 'NoExecute' as const }], tolerations: [] as Toleration[], reason: 'node(s) had untolerated taint {a: }' },
    { taints: [{ key: 'a', effect: 'PreferNoSchedule' as const }], tolerations: [] as Toleration[], reason: undefined },
    { taints: [{ key: 'a', value: 'b', effect: 'NoSchedule' as const }], tolerations: [{ key: 'a', operator: 'Exists' as const }], reason: undefined },
    {
      taints: [
        { key: 'a', effect: 'NoSchedule' as const },
        { key: 'c', value: 'd', effect: 'NoExecute' as const },
      ],
      tolerations: [{ key: 'a', operator: 'Exists' as const }],
      reason: 'node(s) had untolerated taint {c: d}',
    },
  ];
  for (const c of cases) {
    const s = run(taintToleration, makePod('p', { spec: { tolerations: c.tolerations } }), makeNode('n', { taints: c.taints }));
    assert.deepEqual(s?.reasons[0], c.reason, JSON.stringify(c));
  }
});

test('node selector requirements: In, NotIn, Exists, DoesNotExist, Gt, Lt', () => {
  const labels = { zone: 'a', cores: '8' };
  const cases: Array<[NodeSelectorRequirement, boolean]> = [
    [{ key: 'zone', operator: 'In', values: ['a', 'b'] }, true],
    [{ key: 'zone', operator: 'In', values: ['b'] }, false],
    [{ key: 'missing', operator: 'In', values: ['a'] }, false],
    [{ key: 'zone', operator: 'NotIn', values: ['b'] }, true],
    [{ key: 'zone', operator: 'NotIn', values: ['a'] }, false],
    [{ key: 'missing', operator: 'NotIn', values: ['a'] }, true],
    [{ key: 'zone', operator: 'Exists' }, true],
    [{ key: 'missing', operator: 'Exists' }, false],
    [{ key: 'missing', operator: 'DoesNotExist' }, true],
    [{ key: 'zone', operator: 'DoesNotExist' }, false],
    [{ key: 'cores', operator: 'Gt', values: ['4'] }, true],
    [{ key: 'cores', operator: 'Gt', values: ['8'] }, false],
    [{ key: 'cores', operator: 'Lt', values: ['16'] }, true],
    [{ key: 'cores', operator: 'Lt', values: ['8'] }, false],
    [{ key: 'zone', operator: 'Gt', values: ['1'] }, false], // non-integer label
    [{ key: 'missing', operator: 'Lt', values: ['1'] }, false],
  ];
  for (const [r, want] of cases) assert.equal(requirementMatches(r, labels), want, JSON.stringify(r));
});

test('NodeAffinity: nodeSelector and required terms (terms ORed, expressions ANDed)', () => {
  const node = makeNode('n1', { labels: { zone: 'a', disk: 'ssd' } });
  const term = (...e: NodeSelectorRequirement[]) => ({ matchExpressions: e });
  const cases = [
    { spec: {}, ok: true },
    { spec: { nodeSelector: { zone: 'a' } }, ok: true },
    { spec: { nodeSelector: { zone: 'b' } }, ok: false },
    { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term({ key: 'zone', operator: 'In' as const, values: ['a'] })] } } } }, ok: true },
    {
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [term({ key: 'zone', operator: 'In' as const, values: ['a'] }, { key: 'disk', operator: 'NotIn' as const, values: ['ssd'] })],
            },
          },
        },
      },
      ok: false,
    },
    {
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [term({ key: 'zone', operator: 'In' as const, values: ['x'] }), term({ key: 'disk', operator: 'Exists' as const })],
            },
          },
        },
      },
      ok: true,
    },
    { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } } }, ok: false },
    {
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In' as const, values: ['n1'] }] }] },
          },
        },
      },
      ok: true,
    },
    { spec: { nodeSelector: { zone: 'a' }, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term({ key: 'gpu', operator: 'Exists' as const })] } } } }, ok: false },
  ];
  for (const c of cases) {
    const s = run(nodeAffinity, makePod('p', { spec: c.spec }), node);
    assert.equal(s === undefined, c.ok, JSON.stringify(c.spec));
    if (s) assert.deepEqual(s.reasons, ["node(s) didn't match Pod's node affinity/selector"]);
  }
});

test('NodePorts: same port+protocol conflicts when either host IP is the wildcard or both are equal', () => {
  const withPort = (name: string, hostPort: number, protocol: 'TCP' | 'UDP' = 'TCP', hostIP?: string) =>
    makePod(name, { node: 'n', containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort, protocol, hostIP }] }] });
  const cases = [
    { bound: [withPort('x', 8080)], pod: withPort('p', 8081), ok: true },
    { bound: [withPort('x', 8080)], pod: withPort('p', 8080), ok: false },
    { bound: [withPort('x', 8080, 'UDP')], pod: withPort('p', 8080, 'TCP'), ok: true },
    { bound: [withPort('x', 8080, 'TCP', '10.0.0.1')], pod: withPort('p', 8080, 'TCP', '10.0.0.2'), ok: true },
    { bound: [withPort('x', 8080, 'TCP', '10.0.0.1')], pod: withPort('p', 8080, 'TCP', '10.0.0.1'), ok: false },
    { bound: [withPort('x', 8080, 'TCP', '10.0.0.1')], pod: withPort('p', 8080), ok: false },
    { bound: [], pod: withPort('p', 8080), ok: true },
  ];
  for (const c of cases) {
    const s = run(nodePorts, c.pod, makeNode('n'), c.bound);
    assert.equal(s === undefined, c.ok, JSON.stringify(c.pod.spec?.containers[0]?.ports));
    if (s) assert.deepEqual(s, { plugin: 'NodePorts', code: 'Unschedulable', reasons: ["node(s) didn't have free ports for the requested pod ports"] });
  }
});

test('NodeResourcesFit: requests vs allocatable minus bound pods, pod count', () => {
  const cases = [
    { node: makeNode('n', { cpu: '2' }), bound: [makePod('a', { cpu: '1500m', node: 'n' })], pod: makePod('p', { cpu: '500m' }), reasons: undefined },
    { node: makeNode('n', { cpu: '2' }), bound: [makePod('a', { cpu: '1500m', node: 'n' })], pod: makePod('p', { cpu: '501m' }), reasons: ['Insufficient cpu'] },
    { node: makeNode('n', { memory: '1Gi' }), bound: [], pod: makePod('p', { memory: '2Gi', cpu: '5' }), reasons: ['Insufficient cpu', 'Insufficient memory'] },
    { node: makeNode('n', { pods: '1' }), bound: [makePod('a', { node: 'n' })], pod: makePod('p'), reasons: ['Too many pods'] },
    { node: makeNode('n', { cpu: '0' }), bound: [], pod: makePod('p'), reasons: undefined }, // no requests fit anywhere
    {
      node: makeNode('n', { ephemeral: '1Gi' }),
      bound: [],
      pod: makePod('p', { containers: [{ name: 'c', resources: { requests: { 'ephemeral-storage': '2Gi' } } }] }),
      reasons: ['Insufficient ephemeral-storage'],
    },
    // limits only: requests default to limits
    { node: makeNode('n', { cpu: '1' }), bound: [], pod: makePod('p', { containers: [{ name: 'c', resources: { limits: { cpu: '2' } } }] }), reasons: ['Insufficient cpu'] },
  ];
  for (const c of cases) {
    const s = run(nodeResourcesFit, c.pod, c.node, c.bound);
    assert.deepEqual(s?.reasons, c.reasons, c.pod.metadata.name);
    if (s) assert.equal(s.code, 'Unschedulable');
  }
});

test('pod requests: init containers take the max, sidecars add up', () => {
  const pod = makePod('p', {
    containers: [
      { name: 'c1', resources: { requests: { cpu: '2', memory: '1G' } } },
      { name: 'c2', resources: { requests: { cpu: '1', memory: '1G' } } },
    ],
    spec: {
      initContainers: [
        { name: 'i1', resources: { requests: { cpu: '2', memory: '1G' } } },
        { name: 'i2', resources: { requests: { cpu: '2', memory: '3G' } } },
      ],
    },
  });
  assert.deepEqual(podRequests(pod), { milliCPU: 3000, memory: 3e9, ephemeralStorage: 0 });
  const sidecar = makePod('s', {
    containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
    spec: {
      initContainers: [
        { name: 'side', restartPolicy: 'Always', resources: { requests: { cpu: '500m' } } },
        { name: 'init', resources: { requests: { cpu: '1' } } },
      ],
    },
  });
  assert.equal(podRequests(sidecar).milliCPU, 1500);
  assert.equal(podRequests(makePod('z'), { nonZero: true }).milliCPU, 100);
  assert.equal(podRequests(makePod('z'), { nonZero: true }).memory, 200 * 1024 * 1024);
});

test('runFilters stops at the first failing plugin in kube-scheduler order', () => {
  const node = makeNode('n', { unschedulable: true, taints: [{ key: 'a', effect: 'NoSchedule' }], cpu: '0' });
  const s = runFilters(newPodContext(makePod('p', { cpu: '1' })), newNodeInfo(node, []));
  assert.equal(s?.plugin, 'NodeUnschedulable');
});

test('podRequests counts a pod being resized in place at the most it holds or asks for', () => {
  const resized = (cpu: string, allocated: string, actual: string, reason?: string): Pod => {
    const p = makePod('r', { containers: [{ name: 'c', resources: { requests: { cpu } } }] });
    p.status = {
      containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'i', imageID: 'i', allocatedResources: { cpu: allocated }, resources: { requests: { cpu: actual } } }],
      ...(reason ? { conditions: [{ type: 'PodResizePending', status: 'True', reason }] } : {}),
    };
    return p;
  };
  // Growing: the new request counts before the agent allocated it.
  assert.equal(podRequests(resized('2', '1', '1')).milliCPU, 2000);
  // Shrinking: the old allocation counts until the agent has applied the smaller one.
  assert.equal(podRequests(resized('500m', '1', '1')).milliCPU, 1000);
  assert.equal(podRequests(resized('500m', '500m', '1')).milliCPU, 1000);
  // Deferred still counts the desired request; Infeasible counts only what the pod holds.
  assert.equal(podRequests(resized('8', '1', '1', 'Deferred')).milliCPU, 8000);
  assert.equal(podRequests(resized('8', '1', '1', 'Infeasible')).milliCPU, 1000);
});
