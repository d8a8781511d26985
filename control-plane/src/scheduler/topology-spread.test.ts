import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ReplicaSet, Service, TopologySpreadConstraint } from '@nodelet/api';
import { newPodContext } from './filters.js';
import { makeNode, makePod } from './testing/objects.js';
import { testCluster } from './testing/cluster.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const nodes = (o: { taintN3?: boolean } = {}) => [
  makeNode('n1', { labels: { [ZONE]: 'a' } }),
  makeNode('n2', { labels: { [ZONE]: 'a' } }),
  makeNode('n3', { labels: { [ZONE]: 'b' }, ...(o.taintN3 ? { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' as const }] } : {}) }),
];
const c = (topologyKey: string, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra,
});
const web = (name: string, node: string, o: { labels?: Record<string, string>; namespace?: string; terminating?: boolean } = {}): Pod => {
  const p = makePod(name, { node, labels: { app: 'web', ...(o.labels ?? {}) }, ...(o.namespace ? { namespace: o.namespace } : {}) });
  if (o.terminating) p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  return p;
};
const incoming = (constraints: TopologySpreadConstraint[], o: { labels?: Record<string, string>; nodeSelector?: Record<string, string> } = {}): Pod =>
  makePod('p', { labels: o.labels ?? { app: 'web' }, spec: { topologySpreadConstraints: constraints, ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}) } });

test('PodTopologySpread filter: skew, domains, minDomains, inclusion policies, what counts', () => {
  const cases: Array<{ name: string; bound: Pod[]; pod: Pod; taintN3?: boolean; want: string | string[] }> = [
    { name: 'zone skew: zone a already has one more', bound: [web('w1', 'n1')], pod: incoming([c(ZONE)]), want: ['n3'] },
    { name: 'hostname skew', bound: [web('w1', 'n1')], pod: incoming([c(HOST)]), want: ['n2', 'n3'] },
    { name: 'balanced domains accept any node', bound: [web('w1', 'n1'), web('w2', 'n2'), web('w3', 'n3')], pod: incoming([c(HOST)]), want: ['n1', 'n2', 'n3'] },
    {
      name: 'minDomains above the domains there are: the global minimum is 0',
      bound: [web('w1', 'n1'), web('w2', 'n2'), web('w3', 'n3')],
      pod: incoming([c(HOST, { minDomains: 4 })]),
      want: "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    },
    {
      name: 'a node without the topology key',
      bound: [],
      pod: incoming([c('rack')]),
      want: "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints (missing required label). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    },
    { name: 'nodeAffinityPolicy Honor: nodes the pod cannot use are not domains', bound: [web('w1', 'n1'), web('w2', 'n2')], pod: incoming([c(HOST)], { nodeSelector: { [ZONE]: 'a' } }), want: ['n1', 'n2'] },
    { name: 'nodeAffinityPolicy Ignore: they are', bound: [web('w1', 'n1'), web('w2', 'n2')], pod: incoming([c(HOST, { nodeAffinityPolicy: 'Ignore' })], { nodeSelector: { [ZONE]: 'a' } }), want: [] },
    { name: 'nodeTaintsPolicy Ignore (default): a tainted empty node is a domain', bound: [web('w1', 'n1'), web('w2', 'n2')], taintN3: true, pod: incoming([c(HOST)]), want: [] },
    { name: 'nodeTaintsPolicy Honor: it is not', bound: [web('w1', 'n1'), web('w2', 'n2')], taintN3: true, pod: incoming([c(HOST, { nodeTaintsPolicy: 'Honor' })]), want: ['n1', 'n2'] },
    { name: 'terminating pods do not count', bound: [web('w1', 'n1', { terminating: true })], pod: incoming([c(HOST)]), want: ['n1', 'n2', 'n3'] },
    { name: 'pods of other namespaces do not count', bound: [web('w1', 'n1', { namespace: 'other' })], pod: incoming([c(HOST)]), want: ['n1', 'n2', 'n3'] },
    { name: 'matchLabelKeys: only pods with the same value count', bound: [web('w1', 'n1', { labels: { rev: '1' } })], pod: incoming([c(HOST, { matchLabelKeys: ['rev'] })], { labels: { app: 'web', rev: '2' } }), want: ['n1', 'n2', 'n3'] },
    { name: 'a pod not matching its own selector does not add to the skew', bound: [web('w1', 'n1')], pod: incoming([c(HOST)], { labels: {} }), want: ['n1', 'n2', 'n3'] },
    { name: 'ScheduleAnyway constraints never filter', bound: [web('w1', 'n1'), web('w2', 'n1')], pod: incoming([c(HOST, { whenUnsatisfiable: 'ScheduleAnyway' })]), want: ['n1', 'n2', 'n3'] },
  ];
  for (const k of cases) {
    const cl = testCluster(nodes({ taintN3: k.taintN3 ?? false }), k.bound);
    if (Array.isArray(k.want)) {
      const f = cl.feasible(k.pod);
      if (k.want.length > 0 || f.length > 0) {
        assert.deepEqual(f, k.want, k.name);
        continue;
      }
    }
    const r = cl.schedule(k.pod);
    if (typeof k.want === 'string') assert.equal(r.ok ? r.node : r.message, k.want, k.name);
    else assert.equal(r.ok, false, k.name);
  }
});

test('PodTopologySpread score: ScheduleAnyway constraints, upstream formula and normalisation', () => {
  const cl = testCluster(nodes(), [web('w1', 'n1'), web('w2', 'n1'), web('w3', 'n2')]);
  const score = cl.scorers.find((s) => s.name === 'PodTopologySpread')!;
  const pod = incoming([c(HOST, { whenUnsatisfiable: 'ScheduleAnyway' })]);
  // weight ln(3+2); raw n1 round(2×1.609)=3, n2 2, n3 0 → 100×(3+0−s)/3.
  assert.deepEqual(score.score(newPodContext(pod), cl.cache.list), [0, 33, 100]);
  // Only DoNotSchedule constraints: nothing to score (and no system defaults either).
  assert.equal(score.score(newPodContext(incoming([c(HOST)])), cl.cache.list), undefined);
  const r = cl.schedule(pod);
  assert.equal(r.ok && r.node, 'n3');
});

test('PodTopologySpread score: system default constraints for pods a Service or ReplicaSet selects', () => {
  const cl = testCluster(nodes(), [web('w1', 'n1'), web('w2', 'n1'), web('w3', 'n3')]);
  const score = cl.scorers.find((s) => s.name === 'PodTopologySpread')!;
  const pod = makePod('p', { labels: { app: 'web' } });
  assert.equal(score.score(newPodContext(pod), cl.cache.list), undefined, 'nothing selects the pod: no default spreading');
  const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default' }, spec: { selector: { app: 'web' } } };
  cl.workloads.set('svc', svc);
  // hostname maxSkew 3 (weight ln 5), zone maxSkew 5 (weight ln 4, zones a=2 b=1):
  // n1 round(2·1.609+2 + 2·1.386+4)=12, n2 round(2 + 6.77)=9, n3 round(3.61+5.39)=9 → 100×(12+9−s)/12.
  assert.deepEqual(score.score(newPodContext(pod), cl.cache.list), [75, 100, 100]);
  cl.workloads.delete('svc', svc);
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } } as unknown as ReplicaSet;
  cl.workloads.set('rs', rs);
  assert.deepEqual(score.score(newPodContext(pod), cl.cache.list), [75, 100, 100]);
  // A selector that does not match the pod gives it no defaults.
  assert.equal(score.score(newPodContext(makePod('q', { labels: { app: 'db' } })), cl.cache.list), undefined);
});
