// The scheduler's pod-level placement rules with the real kubectl 1.32 on a two-node lab (labUp +
// labAddNode, private ports, bridges nle-sch0/nle-sch1, cluster CIDR 10.223.0.0/16), real
// containerd underneath:
// - required pod anti-affinity on the hostname with only node 1 schedulable (node 2 cordoned):
//   one replica Running, the other Pending with FailedScheduling "didn't match pod anti-affinity
//   rules"; uncordoning node 2 lets it run there;
// - preemption: node 1 filled with low-priority pods whose CPU requests take its allocatable CPU
//   (read from the Node), then a pod of a `kubectl create priorityclass` class preempts one of
//   them (DisruptionTarget PreemptionByScheduler, Preempted event, deleted) and runs;
// - topology spread (maxSkew 1 on the hostname, DoNotSchedule): with node 2 cordoned only one of
//   four replicas may run on node 1; uncordoned, the four balance 2/2.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import type { LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { ApiClient, PODS, loadKubeconfig, type Pod } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { kubectl, type Kubectl } from './helpers.js';
import { startTwoNodeLab, type TwoNodeLab } from './two-node-lab.js';

const CLUSTER_CIDR = '10.223.0.0/16';
const NODE1 = 'sch-node-1';
const NODE2 = 'sch-node-2';

const isReady = (p: Pod): boolean => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const unschedulable = (p: Pod): string | undefined =>
  p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')?.message;
/** Millicores of a CPU quantity as the Node reports it ("2", "1500m", "0.5"). */
const milliCpu = (q: string): number => (q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000));

const skip = ((): string | undefined => {
  let reason: string | undefined;
  requireRoot({ skip: (m?: string) => void (reason = m ?? 'requirements missing') });
  return reason;
})();

describe('scheduler placement rules with kubectl on a two-node lab', { skip }, () => {
  let dir1 = '';
  let cluster: TwoNodeLab | undefined;
  let up: LabUpResult;
  let k: Kubectl;
  let api: ApiClient;
  let busybox = '';
  const manifest = (name: string, objects: unknown[]): string => {
    const f = join(dir1, `${name}.yaml`);
    writeFileSync(f, objects.map((o) => toYaml(o)).join('---\n'));
    return f;
  };
  const pods = async (selector: string): Promise<Pod[]> =>
    (await api.resource(PODS, 'default').list({ labelSelector: selector })).items.filter((p) => !p.metadata.deletionTimestamp);
  const container = (cpu?: string) => ({
    name: 'c', image: busybox, command: ['sleep', '3600'], ...(cpu ? { resources: { requests: { cpu } } } : {}),
  });
  const deployment = (name: string, replicas: number, spec: Record<string, unknown>) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default' },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 1, containers: [container()], ...spec } },
    },
  });
  /** Pods per node of the non-terminating pods matching `selector`, Running and Ready. */
  const readyPerNode = async (selector: string): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    for (const p of (await pods(selector)).filter(isReady)) out[p.spec!.nodeName!] = (out[p.spec!.nodeName!] ?? 0) + 1;
    return out;
  };

  before(async () => {
    cluster = await startTwoNodeLab({ tag: 'sch', clusterCidr: CLUSTER_CIDR, nodeNames: [NODE1, NODE2] });
    ({ up, dir1 } = cluster);
    busybox = up.images.busybox;
    k = kubectl(up.kubeconfig);
    api = new ApiClient({ ...(await loadKubeconfig(up.kubeconfig)), timeoutMs: 30_000 });
  });

  after(async () => {
    api?.close();
    await cluster?.teardown();
  });

  it('required anti-affinity on the hostname: with one schedulable node the second replica stays Pending with the reason', async () => {
    assert.match(await k('cordon', NODE2), new RegExp(`node/${NODE2} cordoned`));
    await k('apply', '-f', manifest('solo', [deployment('solo', 2, {
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'solo' } }, topologyKey: 'kubernetes.io/hostname' }] } },
    })]));
    const pending = await pollUntil('one solo replica Ready on node 1, the other unschedulable', async () => {
      const all = await pods('app=solo');
      const stuck = all.filter((p) => unschedulable(p));
      return all.length === 2 && all.filter(isReady).length === 1 && stuck.length === 1 ? stuck[0] : undefined;
    }, { timeoutMs: 180_000 });
    assert.equal((await readyPerNode('app=solo'))[NODE1], 1);
    assert.equal(pending.spec?.nodeName, undefined);
    // Node 1 holds the other replica; node 2 is cordoned: each node's own reason, counted.
    assert.match(unschedulable(pending)!, /^0\/2 nodes are available: 1 node\(s\) didn't match pod anti-affinity rules, 1 node\(s\) were unschedulable\./);
    const described = await k('describe', 'pod', pending.metadata.name!);
    assert.match(described, /Status:\s+Pending/);
    assert.match(described, /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/2 nodes are available: 1 node\(s\) didn't match pod anti-affinity rules/);
    const events = JSON.parse(await k('get', 'events', '--field-selector', `reason=FailedScheduling,involvedObject.name=${pending.metadata.name!}`, '-o', 'json')) as { items: Array<{ type: string; message: string }> };
    assert.ok(events.items.some((e) => e.type === 'Warning' && /didn't match pod anti-affinity rules/.test(e.message)), JSON.stringify(events.items));

    // A second domain appears: the pending replica runs there, one per node.
    assert.match(await k('uncordon', NODE2), new RegExp(`node/${NODE2} uncordoned`));
    await pollUntil('one solo replica Ready on each node', async () => {
      const per = await readyPerNode('app=solo');
      return per[NODE1] === 1 && per[NODE2] === 1;
    }, { timeoutMs: 180_000 });
    await k('delete', 'deployment', 'solo', '--wait=true', '--timeout=120s');
  });

  it('a high-priority pod preempts a low-priority one on a node whose CPU requests are full', async () => {
    assert.match(await k('create', 'priorityclass', 'sch-low', '--value=100', '--description=fillers'), /priorityclass\.scheduling\.k8s\.io\/sch-low created/);
    assert.match(await k('create', 'priorityclass', 'sch-high', '--value=100000', '--description=preemptor'), /priorityclass\.scheduling\.k8s\.io\/sch-high created/);
    assert.match(await k('get', 'priorityclass', 'sch-high'), /^sch-high\s+100000\s+false\s+/m);
    // Node 1's free CPU: allocatable minus what the pods already on it request.
    const allocatable = milliCpu((await k('get', 'node', NODE1, '-o', 'jsonpath={.status.allocatable.cpu}')).trim());
    const onNode = JSON.parse(await k('get', 'pods', '-A', '--field-selector', `spec.nodeName=${NODE1},status.phase!=Succeeded,status.phase!=Failed`, '-o', 'json')) as { items: Pod[] };
    const requested = onNode.items.flatMap((p) => p.spec?.containers ?? []).reduce((s, c) => s + milliCpu(String(c.resources?.requests?.cpu ?? '0')), 0);
    const half = Math.floor((allocatable - requested) / 2);
    assert.ok(half >= 50, `node 1 has ${allocatable}m allocatable, ${requested}m requested: too little to fill`);
    const onNode1 = { nodeSelector: { 'kubernetes.io/hostname': NODE1 } };
    const pod = (name: string, priorityClassName: string, cpu: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'preempt', role: name } },
      spec: { terminationGracePeriodSeconds: 1, priorityClassName, containers: [container(cpu)], ...onNode1 },
    });
    await k('apply', '-f', manifest('fillers', [pod('filler-a', 'sch-low', `${half}m`), pod('filler-b', 'sch-low', `${half}m`)]));
    await pollUntil('both fillers Ready on node 1', async () => (await pods('app=preempt')).filter((p) => isReady(p) && p.spec?.nodeName === NODE1).length === 2, { timeoutMs: 180_000 });
    assert.deepEqual((await pods('app=preempt')).map((p) => p.spec?.priority), [100, 100]);

    // Watch the fillers: the victim carries DisruptionTarget before it goes.
    const stop = new AbortController();
    const marked = new Map<string, string>();
    const watching = (async () => {
      try {
        for await (const ev of api.resource(PODS, 'default').watch({ labelSelector: 'app=preempt', signal: stop.signal })) {
          if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
          const p = ev.object as Pod;
          const c = p.status?.conditions?.find((x) => x.type === 'DisruptionTarget' && x.status === 'True');
          if (c) marked.set(p.metadata.name!, c.reason ?? '');
        }
      } catch (err) {
        if (!stop.signal.aborted) throw err;
      }
    })();
    await k('apply', '-f', manifest('preemptor', [pod('preemptor', 'sch-high', `${half}m`)]));
    const preemptor = await pollUntil('the preemptor Ready on node 1', async () => {
      const p = (await pods('role=preemptor'))[0];
      return p && isReady(p) && p.spec?.nodeName === NODE1 ? p : undefined;
    }, { timeoutMs: 180_000 });
    stop.abort();
    await watching;
    assert.equal(preemptor.spec?.priority, 100000);
    const left = (await pods('app=preempt')).map((p) => p.metadata.name!).sort();
    assert.equal(left.length, 2, `one filler left beside the preemptor: ${left.join(', ')}`);
    const victim = ['filler-a', 'filler-b'].find((n) => !left.includes(n))!;
    assert.deepEqual([...marked.entries()], [[victim, 'PreemptionByScheduler']]);
    const events = JSON.parse(await k('get', 'events', '--field-selector', 'reason=Preempted', '-o', 'json')) as { items: Array<{ involvedObject: { name: string }; message: string }> };
    assert.deepEqual(events.items.map((e) => e.involvedObject.name), [victim]);
    assert.match(events.items[0]!.message, new RegExp(`^Preempted by pod ${preemptor.metadata.uid!} on node ${NODE1}$`));
    await k('delete', 'pods', '-l', 'app=preempt', '--wait=true', '--timeout=120s');
  });

  it('topology spread with maxSkew 1 on the hostname holds replicas back on one node and balances 2/2 over two', async () => {
    assert.match(await k('cordon', NODE2), new RegExp(`node/${NODE2} cordoned`));
    // A cordoned node is still a domain (nodeTaintsPolicy Ignore): node 1 may run one more than node 2's 0.
    await k('apply', '-f', manifest('spread', [deployment('spread', 4, {
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } }],
    })]));
    await pollUntil('one spread replica Ready, three unschedulable', async () => {
      const all = await pods('app=spread');
      return all.length === 4 && all.filter(isReady).length === 1 && all.filter((p) => unschedulable(p)).length === 3;
    }, { timeoutMs: 180_000 });
    for (const p of (await pods('app=spread')).filter((x) => unschedulable(x))) {
      assert.match(unschedulable(p)!, /^0\/2 nodes are available: 1 node\(s\) didn't match pod topology spread constraints, 1 node\(s\) were unschedulable\./);
    }
    assert.match(await k('uncordon', NODE2), new RegExp(`node/${NODE2} uncordoned`));
    const rolled = await k.try('rollout', 'status', 'deploy/spread', '--timeout=180s');
    assert.equal(rolled.code, 0, rolled.stderr);
    assert.deepEqual(await readyPerNode('app=spread'), { [NODE1]: 2, [NODE2]: 2 });
  });
});
