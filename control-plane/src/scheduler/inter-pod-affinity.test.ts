import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Namespace, Pod, PodAffinityTerm } from '@nodelet/api';
import { interPodAffinityTopologyScores } from './inter-pod-affinity.js';
import { newPodContext } from './filters.js';
import { makeNode, makePod } from './testing/objects.js';
import { testCluster } from './testing/cluster.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const nodes = () => [makeNode('n1', { labels: { [ZONE]: 'a' } }), makeNode('n2', { labels: { [ZONE]: 'a' } }), makeNode('n3', { labels: { [ZONE]: 'b' } })];
const term = (app: string, topologyKey = HOST, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm => ({ labelSelector: { matchLabels: { app } }, topologyKey, ...extra });
const anti = (...t: PodAffinityTerm[]) => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: t } } });
const aff = (...t: PodAffinityTerm[]) => ({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: t } } });
const pod = (name: string, labels: Record<string, string>, spec: Partial<Pod['spec']> = {}, o: { node?: string; namespace?: string } = {}) =>
  makePod(name, { labels, spec: spec as Pod['spec'], ...o });
const ns = (name: string, labels: Record<string, string>): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

test('InterPodAffinity filter: required affinity, anti-affinity, symmetry, namespaces and selectors', () => {
  const web1 = pod('web-1', { app: 'web', version: 'v1' }, {}, { node: 'n1' });
  // want: the feasible nodes, or the FailedScheduling message when there are none.
  const cases: Array<{ name: string; bound?: Pod[]; ns?: Namespace[]; pod: Pod; want: string | string[] }> = [
    { name: 'anti-affinity by hostname skips the node with a match', bound: [web1], pod: pod('p', {}, anti(term('web'))), want: ['n2', 'n3'] },
    { name: 'anti-affinity by zone skips the whole zone', bound: [web1], pod: pod('p', {}, anti(term('web', ZONE))), want: ['n3'] },
    { name: 'affinity by zone goes where a match is', bound: [pod('db', { app: 'db' }, {}, { node: 'n3' })], pod: pod('p', {}, aff(term('db', ZONE))), want: ['n3'] },
    {
      name: 'affinity with no match anywhere (pod does not match itself)',
      pod: pod('p', {}, aff(term('db', ZONE))),
      want: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    },
    { name: 'first pod of a self-affine group may land', pod: pod('p', { app: 'cache' }, aff(term('cache', ZONE))), want: ['n1', 'n2', 'n3'] },
    {
      name: 'the first-pod exception still applies when the only match is on a node without the topology key',
      bound: [pod('c', { app: 'cache' }, {}, { node: 'bare' })],
      pod: pod('p', { app: 'cache' }, aff(term('cache', ZONE))),
      want: ['n1', 'n2', 'n3'],
    },
    {
      name: 'the first-pod exception does not apply once a match exists elsewhere',
      bound: [pod('c', { app: 'cache' }, {}, { node: 'n3' })],
      pod: pod('p', { app: 'cache' }, aff(term('cache', ZONE))),
      want: ['n3'],
    },
    { name: 'symmetry: an existing pod’s anti-affinity keeps the incoming pod away', bound: [pod('guard', { app: 'g' }, anti(term('web')), { node: 'n1' })], pod: pod('p', { app: 'web' }), want: ['n2', 'n3'] },
    { name: 'a term covers only its own namespace by default', bound: [pod('w', { app: 'web' }, {}, { node: 'n1', namespace: 'other' })], pod: pod('p', {}, anti(term('web'))), want: ['n1', 'n2', 'n3'] },
    { name: 'namespaces lists the namespaces', bound: [pod('w', { app: 'web' }, {}, { node: 'n1', namespace: 'other' })], pod: pod('p', {}, anti(term('web', HOST, { namespaces: ['other'] }))), want: ['n2', 'n3'] },
    {
      name: 'namespaceSelector picks namespaces by label',
      bound: [pod('w', { app: 'web' }, {}, { node: 'n1', namespace: 'other' })],
      ns: [ns('other', { team: 'x' }), ns('default', {})],
      pod: pod('p', {}, anti(term('web', HOST, { namespaceSelector: { matchLabels: { team: 'x' } } }))),
      want: ['n2', 'n3'],
    },
    { name: 'an empty namespaceSelector is every namespace', bound: [pod('w', { app: 'web' }, {}, { node: 'n1', namespace: 'other' })], ns: [ns('other', {})], pod: pod('p', {}, anti(term('web', HOST, { namespaceSelector: {} }))), want: ['n2', 'n3'] },
    { name: 'matchLabelKeys narrows to pods with the same value', bound: [web1], pod: pod('p', { version: 'v2' }, anti(term('web', HOST, { matchLabelKeys: ['version'] }))), want: ['n1', 'n2', 'n3'] },
    { name: 'mismatchLabelKeys excludes pods with the same value', bound: [web1], pod: pod('p', { version: 'v1' }, anti(term('web', HOST, { mismatchLabelKeys: ['version'] }))), want: ['n1', 'n2', 'n3'] },
    { name: 'a nil labelSelector matches no pod', bound: [web1], pod: pod('p', {}, anti({ topologyKey: HOST })), want: ['n1', 'n2', 'n3'] },
    {
      name: 'a node without the topology key fails required affinity',
      bound: [pod('db', { app: 'db' }, {}, { node: 'n3' })],
      pod: pod('p', {}, aff(term('db', 'rack'))),
      want: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    },
  ];
  for (const c of cases) {
    const cl = testCluster(nodes(), c.bound ?? [], c.ns ?? []);
    // A node that carries no zone label, for the case whose bound pod sits there.
    if (c.bound?.some((p) => p.spec?.nodeName === 'bare')) cl.cache.addOrUpdateNode(makeNode('bare'));
    if (Array.isArray(c.want)) {
      assert.deepEqual(cl.feasible(c.pod).filter((n) => n !== 'bare'), c.want, c.name);
      continue;
    }
    const r = cl.schedule(c.pod);
    assert.equal(r.ok ? r.node : r.message, c.want, c.name);
  }
});

test('InterPodAffinity: the unschedulable message on a one-node cluster is upstream’s', () => {
  const replica = (n: string) => pod(n, { app: 'web' }, anti(term('web')));
  const cl = testCluster([makeNode('only')]);
  const first = cl.schedule(replica('web-0'));
  assert.deepEqual(first.ok && first.node, 'only');
  cl.bind(replica('web-0'), 'only');
  const second = cl.schedule(replica('web-1'));
  assert.equal(second.ok, false);
  assert.equal(
    !second.ok && second.message,
    "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
  );
  // Symmetry gives its own reason: the incoming pod has no terms, the bound one does.
  const plain = cl.schedule(pod('plain', { app: 'web' }));
  assert.match(!plain.ok ? plain.message : '', /1 node\(s\) didn't satisfy existing pods anti-affinity rules\./);
});

test('InterPodAffinity: counts follow pods added and removed after the selector was first asked for', () => {
  const cl = testCluster(nodes());
  const p = pod('p', {}, anti(term('web', ZONE)));
  assert.equal(cl.schedule(p).ok && (cl.schedule(p) as { node: string }).node, 'n1');
  cl.bind(pod('w', { app: 'web' }), 'n1');
  const r = cl.schedule(p);
  assert.equal(r.ok && r.node, 'n3');
  cl.cache.removePod('default/w');
  const back = cl.schedule(p);
  assert.equal(back.ok && back.node, 'n1');
  assert.equal(cl.cache.matches.size, 1, 'one predicate registered, reused across cycles');
});

test('InterPodAffinity score: preferred terms of the pod and of existing pods, per topology domain', () => {
  const pref = (app: string, weight: number, kind: 'podAffinity' | 'podAntiAffinity') => ({
    affinity: { [kind]: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight, podAffinityTerm: term(app, ZONE) }] } },
  });
  const db = pod('db', { app: 'db' }, {}, { node: 'n3' });
  // Preferred affinity to db's zone wins over the emptier nodes.
  assert.equal((testCluster(nodes(), [db]).schedule(pod('p', {}, pref('db', 50, 'podAffinity'))) as { node: string }).node, 'n3');
  // Preferred anti-affinity avoids zone b even though n3 is otherwise equal.
  const cl = testCluster(nodes(), [pod('w', { app: 'web' }, {}, { node: 'n1' })]);
  assert.equal((cl.schedule(pod('p', {}, pref('web', 100, 'podAntiAffinity'))) as { node: string }).node, 'n3');
  // Raw topology scores: pod's term + an existing pod's preferred and required terms that match the pod.
  const existing = pod('e', { app: 'e' }, { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('x', ZONE)], preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 7, podAffinityTerm: term('x', ZONE) }] } } }, { node: 'n3' });
  const c2 = testCluster(nodes(), [db, existing]);
  const scores = interPodAffinityTopologyScores(newPodContext(pod('p', { app: 'x' }, pref('db', 10, 'podAffinity'))), c2.cache, { labels: () => ({}), all: () => [] });
  assert.deepEqual(Object.fromEntries(scores.get(ZONE)!), { b: 10 + 1 + 7 });
});
