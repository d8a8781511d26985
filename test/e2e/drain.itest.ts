// Draining a node with the real kubectl 1.32 on a two-node lab (labUp + labAddNode, private ports,
// bridges nle-dr0/nle-dr1, cluster CIDR 10.226.0.0/16): cordon/uncordon, drain refusing DaemonSet
// and emptyDir pods without their flags, and a PodDisruptionBudget of minAvailable 2 over a
// 3-replica Deployment making drain evict one pod at a time (429, retry, replacement Ready on the
// other node) — checked on a watch of the pods for the whole drain.
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

const CLUSTER_CIDR = '10.226.0.0/16';
const NODE1 = 'dr-node-1';
const NODE2 = 'dr-node-2';


const isReady = (p: Pod): boolean => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

const skip = ((): string | undefined => {
  let reason: string | undefined;
  requireRoot({ skip: (m?: string) => void (reason = m ?? 'requirements missing') });
  return reason;
})();

describe('kubectl drain with a PodDisruptionBudget on a two-node lab', { skip }, () => {
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
  const pods = async (selector: string): Promise<Pod[]> => (await api.resource(PODS, 'default').list({ labelSelector: selector })).items;

  before(async () => {
    cluster = await startTwoNodeLab({ tag: 'dr', clusterCidr: CLUSTER_CIDR, nodeNames: [NODE1, NODE2] });
    ({ up, dir1 } = cluster);
    busybox = up.images.busybox;
    k = kubectl(up.kubeconfig);
    api = new ApiClient({ ...(await loadKubeconfig(up.kubeconfig)), timeoutMs: 30_000 });
  });

  after(async () => {
    api?.close();
    await cluster?.teardown();
  });

  it('drain evicts one pod at a time under a minAvailable 2 budget; DaemonSet and emptyDir pods need their flags', async () => {
    // 1. Everything on node 1: node 2 is cordoned while the workloads start.
    assert.match(await k('cordon', NODE2), new RegExp(`node/${NODE2} cordoned`));
    assert.equal((await k('get', 'node', NODE2, '-o', 'jsonpath={.spec.unschedulable}')).trim(), 'true');
    const template = (app: string, volumes = false) => ({
      metadata: { labels: { app } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: busybox, command: ['sleep', '3600'], ...(volumes ? { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } : {}) }],
        ...(volumes ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}),
      },
    });
    await k('apply', '-f', manifest('workloads', [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('web', true) } },
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'nodeagent', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'nodeagent' } }, template: template('nodeagent') } },
    ]));
    const rolled = await k.try('rollout', 'status', 'deploy/web', '--timeout=180s');
    assert.equal(rolled.code, 0, rolled.stderr);
    assert.deepEqual((await pods('app=web')).map((p) => p.spec?.nodeName), [NODE1, NODE1, NODE1]);
    // The DaemonSet tolerates unschedulable nodes: one pod on each.
    await pollUntil('a DaemonSet pod Ready on each node', async () => {
      const ds = (await pods('app=nodeagent')).filter(isReady);
      return ds.length === 2 && new Set(ds.map((p) => p.spec?.nodeName)).size === 2;
    }, { timeoutMs: 180_000 });
    assert.match(await k('uncordon', NODE2), new RegExp(`node/${NODE2} uncordoned`));

    // 2. The budget, created by kubectl's generator (a protobuf body), kept by the disruption controller.
    await k('create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=2');
    await pollUntil('ALLOWED DISRUPTIONS 1', async () => /^web\s+2\s+N\/A\s+1\s+/m.test(await k('get', 'pdb', 'web')), { timeoutMs: 60_000 });
    assert.match(await k('get', 'pdb'), /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE$/m);
    const status = JSON.parse(await k('get', 'pdb', 'web', '-o', 'json')).status;
    assert.deepEqual([status.currentHealthy, status.desiredHealthy, status.expectedPods, status.disruptionsAllowed], [3, 2, 3, 1]);

    // 3. Without the flags, drain names what stops it (and evicts nothing).
    const refused = await k.try('drain', NODE1, '--timeout=30s');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /cannot delete DaemonSet-managed Pods \(use --ignore-daemonsets to ignore\)/);
    assert.match(refused.stderr, /cannot delete Pods with local storage \(use --delete-emptydir-data to override\)/);
    assert.equal((await pods('app=web')).filter((p) => p.metadata.deletionTimestamp).length, 0);

    // 4. The drain, watched: Ready pods that are not terminating never drop below the budget's 2.
    const watchStop = new AbortController();
    const seen = new Map<string, Pod>();
    const evictedMarked = new Set<string>();
    const healthyNow = (): number => [...seen.values()].filter((x) => isReady(x) && !x.metadata.deletionTimestamp).length;
    let tracking = false;
    let minHealthy = Number.POSITIVE_INFINITY;
    let watchError: unknown;
    const watching = (async () => {
      try {
        for await (const ev of api.resource(PODS, 'default').watch({ labelSelector: 'app=web', signal: watchStop.signal })) {
          if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
          const p = ev.object as Pod;
          if (ev.type === 'DELETED') seen.delete(p.metadata.uid!);
          else seen.set(p.metadata.uid!, p);
          if (p.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'EvictionByEvictionAPI')) evictedMarked.add(p.metadata.name!);
          if (tracking) minHealthy = Math.min(minHealthy, healthyNow());
        }
      } catch (err) {
        if (!watchStop.signal.aborted) watchError = err;
      }
    })();
    const originals = (await pods('app=web')).map((p) => p.metadata.name!);
    // The watch's initial events arrive one by one: the invariant is tracked once all three are in.
    await pollUntil('the watch sees the 3 ready pods', async () => healthyNow() === 3 || undefined, { timeoutMs: 10_000 });
    tracking = true;
    const drained = await k.try('drain', NODE1, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=240s');
    watchStop.abort();
    await watching;
    assert.equal(watchError, undefined, String(watchError));
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, new RegExp(`node/${NODE1} drained`));
    assert.match(drained.stderr, /Warning: ignoring DaemonSet-managed Pods: default\/nodeagent-/);
    // Only one could go at first: the others were refused and retried until replacements were Ready.
    assert.match(drained.stderr, /error when evicting pods\/"web-[^"]+" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./);
    for (const name of originals) assert.match(drained.stdout, new RegExp(`pod/${name} evicted`));
    assert.ok(minHealthy >= 2, `ready, non-terminating web pods dropped to ${minHealthy}`);
    assert.deepEqual([...evictedMarked].sort(), [...originals].sort(), 'each evicted pod carried DisruptionTarget=True (EvictionByEvictionAPI)');

    // 5. Afterwards: the Deployment runs on node 2, the DaemonSet pod still on node 1, node 1 cordoned.
    const web = (await pods('app=web')).filter((p) => !p.metadata.deletionTimestamp);
    assert.deepEqual(web.map((p) => p.spec?.nodeName), [NODE2, NODE2, NODE2]);
    assert.ok((await pods('app=nodeagent')).some((p) => p.spec?.nodeName === NODE1 && !p.metadata.deletionTimestamp));
    assert.equal((await k('get', 'node', NODE1, '-o', 'jsonpath={.spec.unschedulable}')).trim(), 'true');
    assert.match(await k('get', 'node', NODE1), /Ready,SchedulingDisabled/);
    await pollUntil('budget back to 1 allowed', async () => /^web\s+2\s+N\/A\s+1\s+/m.test(await k('get', 'pdb', 'web')), { timeoutMs: 60_000 });
    assert.match(await k('uncordon', NODE1), new RegExp(`node/${NODE1} uncordoned`));
  });
});
