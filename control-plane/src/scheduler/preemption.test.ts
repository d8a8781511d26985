import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodDisruptionBudget, PodSpec } from '@nodelet/api';
import { schedulePod } from './algorithm.js';
import { Nominator } from './nominator.js';
import { newPodInfo } from './pod-info.js';
import { pickOneNodeForPreemption, type Candidate } from './preemption.js';
import { testCluster } from './testing/cluster.js';
import { makeNode, makePod } from './testing/objects.js';

const HOST = 'kubernetes.io/hostname';
/** A pod of `priority` asking for `cpu`, bound to `node` when given, started at second `started`. */
function pod(name: string, priority: number, cpu: string, o: { node?: string; labels?: Record<string, string>; spec?: Partial<PodSpec>; started?: number } = {}): Pod {
  const p = makePod(name, { cpu, node: o.node, labels: o.labels, spec: { priority, ...o.spec } });
  if (o.started !== undefined) p.status = { phase: 'Running', startTime: new Date(Date.UTC(2026, 0, 1, 0, 0, o.started)).toISOString() };
  return p;
}
function pdb(name: string, app: string, allowed: number): PodDisruptionBudget {
  return { metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels: { app } } }, status: { disruptionsAllowed: allowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, observedGeneration: 1 } } as PodDisruptionBudget;
}
const oneCpu = (...names: string[]) => names.map((n) => makeNode(n, { cpu: '1' }));
const spread = { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: HOST, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } }] };

test('preemption: candidate nodes, victims and the message when there is none (real cache, every filter)', () => {
  // want: node and victims, or the whole FailedScheduling message.
  const cases: Array<{ name: string; nodes: ReturnType<typeof makeNode>[]; bound: Pod[]; pod: Pod; pdbs?: PodDisruptionBudget[]; want: { node: string; victims: string[]; pdb?: number } | string }> = [
    { name: 'a full node with one lower-priority pod', nodes: oneCpu('n1'), bound: [pod('low', 0, '1', { node: 'n1' })], pod: pod('p', 100, '1'), want: { node: 'n1', victims: ['low'] } },
    {
      name: 'reprieve: the more important of two victims stays when one is enough',
      nodes: [makeNode('n1', { cpu: '2' })],
      bound: [pod('low-1', 1, '1', { node: 'n1' }), pod('low-2', 2, '1', { node: 'n1' })],
      pod: pod('p', 100, '1'),
      want: { node: 'n1', victims: ['low-1'] },
    },
    {
      name: 'pods of equal priority are never victims',
      nodes: oneCpu('n1'),
      bound: [pod('same', 100, '1', { node: 'n1' })],
      pod: pod('p', 100, '1'),
      want: '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    },
    {
      name: 'preemptionPolicy Never',
      nodes: oneCpu('n1'),
      bound: [pod('low', 0, '1', { node: 'n1' })],
      pod: pod('p', 100, '1', { spec: { preemptionPolicy: 'Never' } }),
      want: '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.',
    },
    {
      name: 'an UnschedulableAndUnresolvable node is skipped even with victims on it',
      nodes: [makeNode('cordoned', { cpu: '1', unschedulable: true }), makeNode('n2', { cpu: '1' })],
      bound: [pod('low', 0, '1', { node: 'cordoned' }), pod('high', 200, '1', { node: 'n2' })],
      pod: pod('p', 100, '1'),
      want: '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.',
    },
    {
      name: 'removing every lower-priority pod is not enough',
      nodes: [makeNode('n1', { cpu: '2' })],
      bound: [pod('low', 0, '1', { node: 'n1' }), pod('high', 200, '1', { node: 'n1' })],
      pod: pod('p', 100, '2'),
      want: '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.',
    },
    {
      name: 'required anti-affinity: the matching lower-priority pod is the victim (filter state updated)',
      nodes: [makeNode('n1')],
      bound: [pod('web', 0, '100m', { node: 'n1', labels: { app: 'web' } }), pod('other', 0, '100m', { node: 'n1' })],
      pod: pod('p', 100, '100m', { spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: HOST }] } } } }),
      want: { node: 'n1', victims: ['web'] },
    },
    {
      name: 'symmetry: an existing pod whose anti-affinity rejects the preemptor is the victim',
      nodes: [makeNode('n1')],
      bound: [
        pod('guard', 0, '100m', { node: 'n1', spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'p' } }, topologyKey: HOST }] } } } }),
        pod('other', 0, '100m', { node: 'n1' }),
      ],
      pod: pod('p', 100, '100m', { labels: { app: 'p' } }),
      want: { node: 'n1', victims: ['guard'] },
    },
    {
      name: 'topology spread: matching lower-priority pods are removed until the skew allows the pod',
      nodes: [makeNode('n1'), makeNode('n2', { cpu: '1' })],
      bound: [
        pod('web-1', 0, '100m', { node: 'n1', labels: { app: 'web' }, started: 1 }),
        pod('web-2', 0, '100m', { node: 'n1', labels: { app: 'web' }, started: 2 }),
        pod('other', 0, '100m', { node: 'n1' }),
        pod('high', 200, '1', { node: 'n2' }),
      ],
      pod: pod('p', 100, '100m', { labels: { app: 'web' }, spec: spread }),
      want: { node: 'n1', victims: ['web-1', 'web-2'] },
    },
    {
      name: 'a PDB-protected victim is still taken when it is the only way, and counted',
      nodes: oneCpu('n1'),
      bound: [pod('low', 0, '1', { node: 'n1', labels: { app: 'db' } })],
      pdbs: [pdb('db', 'db', 0)],
      pod: pod('p', 100, '1'),
      want: { node: 'n1', victims: ['low'], pdb: 1 },
    },
    {
      name: 'fewest PDB violations: the unprotected node wins',
      nodes: oneCpu('n1', 'n2'),
      bound: [pod('db', 0, '1', { node: 'n1', labels: { app: 'db' } }), pod('web', 5, '1', { node: 'n2', labels: { app: 'web' } })],
      pdbs: [pdb('db', 'db', 0)],
      pod: pod('p', 100, '1'),
      want: { node: 'n2', victims: ['web'] },
    },
    {
      name: 'a budget with a disruption left is no violation: lower victim priority decides',
      nodes: oneCpu('n1', 'n2'),
      bound: [pod('db', 0, '1', { node: 'n1', labels: { app: 'db' } }), pod('web', 5, '1', { node: 'n2', labels: { app: 'web' } })],
      pdbs: [pdb('db', 'db', 1)],
      pod: pod('p', 100, '1'),
      want: { node: 'n1', victims: ['db'] },
    },
    {
      name: 'lowest highest-victim priority',
      nodes: oneCpu('n1', 'n2'),
      bound: [pod('a', 5, '1', { node: 'n1' }), pod('b', 3, '1', { node: 'n2' })],
      pod: pod('p', 100, '1'),
      want: { node: 'n2', victims: ['b'] },
    },
    {
      name: 'smallest sum of victim priorities when the highest are equal',
      nodes: oneCpu('n1', 'n2'),
      bound: [pod('a1', 3, '500m', { node: 'n1' }), pod('a2', 3, '500m', { node: 'n1' }), pod('b1', 3, '500m', { node: 'n2' }), pod('b2', 1, '500m', { node: 'n2' })],
      pod: pod('p', 100, '1'),
      want: { node: 'n2', victims: ['b1', 'b2'] },
    },
    {
      name: 'latest start of the highest-priority victims',
      nodes: oneCpu('n1', 'n2'),
      bound: [pod('old', 3, '1', { node: 'n1', started: 1 }), pod('young', 3, '1', { node: 'n2', started: 50 })],
      pod: pod('p', 100, '1'),
      want: { node: 'n2', victims: ['young'] },
    },
  ];
  for (const c of cases) {
    const cl = testCluster(c.nodes, c.bound);
    const r = schedulePod(c.pod, cl.cache, { filters: cl.filters, scorers: cl.scorers, percentageOfNodesToScore: 100, random: () => 0, ...(c.pdbs ? { pdbs: c.pdbs } : {}) });
    assert.equal(r.ok, false, c.name);
    if (r.ok) continue;
    if (typeof c.want === 'string') {
      assert.equal(r.preemption, undefined, c.name);
      assert.equal(r.message, c.want, c.name);
      continue;
    }
    assert.ok(r.preemption, `${c.name}: ${r.message}`);
    assert.equal(r.preemption.node, c.want.node, c.name);
    assert.deepEqual(r.preemption.victims.map((v) => v.pod.metadata.name).sort(), [...c.want.victims].sort(), c.name);
    assert.equal(r.preemption.numPDBViolations, c.want.pdb ?? 0, c.name);
    // With a candidate, the message is the filters' alone (upstream's PostFilter succeeded).
    assert.doesNotMatch(r.message, /preemption:/, c.name);
  }
});

test('preemption: a pod already nominated with lower-priority victims still terminating waits instead of preempting again', () => {
  const victim = pod('low', 0, '1', { node: 'n1' });
  victim.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  victim.status = { phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] };
  const cl = testCluster(oneCpu('n1', 'n2'), [victim, pod('low-2', 0, '1', { node: 'n2' })]);
  const p = pod('p', 100, '1');
  p.status = { phase: 'Pending', nominatedNodeName: 'n1' };
  const r = schedulePod(p, cl.cache, { filters: cl.filters, percentageOfNodesToScore: 100 });
  assert.equal(!r.ok && r.message, '0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.');
});

test('nominated pods of equal or higher priority hold their room; lower ones do not', () => {
  const cl = testCluster([makeNode('n1', { cpu: '2' })], [pod('bound', 0, '1', { node: 'n1' })]);
  const nominator = new Nominator();
  nominator.add(newPodInfo(pod('preemptor', 100, '1')), 'n1');
  const opts = { filters: cl.filters, nominated: nominator.forNode, percentageOfNodesToScore: 100 };
  const lower = schedulePod(pod('lower', 50, '1', { spec: { preemptionPolicy: 'Never' } }), cl.cache, opts);
  assert.equal(!lower.ok && lower.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
  assert.equal(schedulePod(pod('higher', 200, '1'), cl.cache, opts).ok, true);
  assert.equal(schedulePod(pod('equal', 100, '1'), cl.cache, opts).ok, false);
  // The nominated pod itself is not in its own way.
  assert.equal(schedulePod(pod('preemptor', 100, '1'), cl.cache, opts).ok, true);
});

test('pickOneNodeForPreemption: the first candidate wins a full tie', () => {
  const v = (name: string, priority: number) => newPodInfo(pod(name, priority, '1', { node: 'x', started: 1 }));
  const c = (node: string, ...victims: ReturnType<typeof v>[]): Candidate => ({ node, victims, numPDBViolations: 0 });
  assert.equal(pickOneNodeForPreemption([c('a', v('1', 1)), c('b', v('2', 1))])?.node, 'a');
  assert.equal(pickOneNodeForPreemption([]), undefined);
});

test('preemption that can help nowhere voids the pod’s nomination; one that finds no victims does not', () => {
  const cl = testCluster([makeNode('n1', { cpu: '1', unschedulable: true }), makeNode('n2', { cpu: '1' })], [pod('high', 200, '1', { node: 'n2' })]);
  const p = pod('p', 100, '1');
  p.status = { phase: 'Pending', nominatedNodeName: 'n1' };
  const nowhere = schedulePod(p, cl.cache, { filters: cl.filters, percentageOfNodesToScore: 100 });
  assert.equal(!nowhere.ok && nowhere.clearNomination, undefined, 'n2 is a potential node, its dry run found no victims');
  cl.cache.addOrUpdateNode(makeNode('n2', { cpu: '1', unschedulable: true }));
  const r = schedulePod(p, cl.cache, { filters: cl.filters, percentageOfNodesToScore: 100 });
  assert.equal(!r.ok && r.clearNomination, true);
  assert.equal(!r.ok && r.message, '0/2 nodes are available: 2 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.');
});

test('the nominated node is tried first and taken when it fits, though scoring prefers another', () => {
  const cl = testCluster([makeNode('empty'), makeNode('busy')], [pod('bound', 0, '2', { node: 'busy' })]);
  const opts = { filters: cl.filters, scorers: cl.scorers, percentageOfNodesToScore: 100, random: () => 0 };
  const free = schedulePod(pod('p', 100, '1'), cl.cache, opts);
  assert.equal(free.ok && free.node, 'empty');
  const p = pod('p', 100, '1');
  p.status = { phase: 'Pending', nominatedNodeName: 'busy' };
  const r = schedulePod(p, cl.cache, opts);
  assert.equal(r.ok && r.node, 'busy');
  // A nominated node that no longer fits is passed over.
  const big = pod('big', 100, '3');
  big.status = { phase: 'Pending', nominatedNodeName: 'busy' };
  const r2 = schedulePod(big, cl.cache, opts);
  assert.equal(r2.ok && r2.node, 'empty');
});
