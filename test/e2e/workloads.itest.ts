// The workload kinds with the real kubectl on a two-node lab (labUp + labAddNode, private ports,
// bridges nle-wl0/nle-wl1): Jobs (completions/parallelism, backoffLimit, Indexed), a CronJob run
// by the real controller on a fast clock, a DaemonSet and a hostNetwork DaemonSet on both nodes
// with a rolling update, and a StatefulSet on local-path volumes that keeps its data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { labPaths, type LabUpResult } from '@nodelet/cli';
import { startControllerManager } from '@nodelet/control-plane';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { ApiClient, PODS, loadKubeconfig, type Pod } from '@nodelet/api';
import { BaseClock, noopLogger, pollUntil } from '@nodelet/base';
import { kubectl, type Kubectl } from './helpers.js';
import { startTwoNodeLab, type TwoNodeLab } from './two-node-lab.js';

const CLUSTER_CIDR = '10.241.0.0/16';

/** The CronJob controller's clock: `rate` times faster than real time from its creation. */
class FastClock extends BaseClock {
  readonly #t0 = Date.now();
  readonly #m0 = performance.now();
  constructor(readonly rate: number) {
    super();
  }
  now(): number {
    return this.#t0 + (Date.now() - this.#t0) * this.rate;
  }
  monotonic(): number {
    return this.#m0 + (performance.now() - this.#m0) * this.rate;
  }
  setTimer(ms: number, fn: () => void): () => void {
    const t = setTimeout(fn, ms / this.rate);
    t.unref?.();
    return () => clearTimeout(t);
  }
}


interface PodRow {
  name: string;
  uid: string;
  node: string;
  phase: string;
  ip: string;
  hostIP: string;
  deleting: boolean;
  created: string;
  readySince?: string;
}

/** Why the suite cannot run here (not root, no containerd…), or undefined. */
const skip = ((): string | undefined => {
  let reason: string | undefined;
  requireRoot({ skip: (m?: string) => void (reason = m ?? 'requirements missing') });
  return reason;
})();

describe('workloads on a two-node lab with the real kubectl', { skip }, () => {
  let dir1 = '';
  let dir2 = '';
  let cluster: TwoNodeLab | undefined;
  let up: LabUpResult;
  let k: Kubectl;
  let busybox = '';
  let kubeconfig = '';
  const manifest = (name: string, objects: unknown[]): string => {
    const f = join(dir1, `${name}.yaml`);
    writeFileSync(f, objects.map((o) => toYaml(o)).join('---\n'));
    return f;
  };
  const pods = async (selector: string): Promise<PodRow[]> => {
    const list = JSON.parse(await k('get', 'pods', '-l', selector, '-o', 'json')) as { items: Array<{ metadata: { name: string; uid: string; creationTimestamp: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { phase?: string; podIP?: string; hostIP?: string; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> } }> };
    return list.items.map((p) => ({
      name: p.metadata.name, uid: p.metadata.uid, node: p.spec.nodeName ?? '', phase: p.status.phase ?? '', ip: p.status.podIP ?? '', hostIP: p.status.hostIP ?? '',
      deleting: !!p.metadata.deletionTimestamp, created: p.metadata.creationTimestamp,
      readySince: p.status.conditions?.find((c) => c.type === 'Ready' && c.status === 'True')?.lastTransitionTime,
    }));
  };

  before(async () => {
    cluster = await startTwoNodeLab({ tag: 'wl', clusterCidr: CLUSTER_CIDR, nodeNames: ['wl-node-1', 'wl-node-2'], serverArgs: ['--controllers', '*,-cronjob'] });
    ({ up, dir1, dir2 } = cluster);
    kubeconfig = up.kubeconfig;
    busybox = up.images.busybox;
    k = kubectl(up.kubeconfig);
  });

  after(async () => {
    await cluster?.teardown();
  });

  const job = (name: string, spec: Record<string, unknown>, command: string[]) => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'default' },
    spec: { ...spec, template: { spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: busybox, command }] } } },
  });

  it('a 5-completion, parallelism-2 Job completes and `kubectl wait` returns; logs job/x', async () => {
    await k('apply', '-f', manifest('five', [job('five', { completions: 5, parallelism: 2 }, ['sh', '-c', 'echo done'])]));
    const w = await k.try('wait', '--for=condition=complete', 'job/five', '--timeout=180s');
    assert.equal(w.code, 0, w.stderr);
    assert.match(w.stdout, /job\.batch\/five condition met/);
    const table = await k('get', 'job', 'five');
    assert.match(table, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE/m);
    assert.match(table, /^five\s+Complete\s+5\/5\s+\S+\s+\S+/m);
    assert.equal((await k('logs', 'job/five')).trim(), 'done');
    const ps = await pods('batch.kubernetes.io/job-name=five');
    assert.equal(ps.filter((p) => p.phase === 'Succeeded').length, 5);
  });

  it('a failing Job with backoffLimit 1 ends Failed with BackoffLimitExceeded', async () => {
    await k('apply', '-f', manifest('fails', [job('fails', { backoffLimit: 1 }, ['sh', '-c', 'exit 1'])]));
    const w = await k.try('wait', '--for=condition=failed', 'job/fails', '--timeout=180s');
    assert.equal(w.code, 0, w.stderr);
    const reason = await k('get', 'job', 'fails', '-o', 'jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.failed}');
    assert.equal(reason.trim(), 'BackoffLimitExceeded 2');
    assert.match(await k('get', 'job', 'fails'), /^fails\s+Failed\s+0\/1/m);
  });

  it('an Indexed Job: each pod sees its JOB_COMPLETION_INDEX', async () => {
    await k('apply', '-f', manifest('idx', [job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }, ['sh', '-c', 'echo "index=$JOB_COMPLETION_INDEX host=$(hostname)"'])]));
    assert.equal((await k.try('wait', '--for=condition=complete', 'job/idx', '--timeout=180s')).code, 0);
    const outputs: string[] = [];
    for (const p of await pods('batch.kubernetes.io/job-name=idx')) outputs.push((await k('logs', p.name)).trim());
    assert.deepEqual(outputs.sort(), ['index=0 host=idx-0', 'index=1 host=idx-1', 'index=2 host=idx-2']);
    assert.equal((await k('get', 'job', 'idx', '-o', 'jsonpath={.status.completedIndexes}')).trim(), '0-2');
  });

  it('a */1 CronJob makes a Job every (fast) minute and keeps 2 successful ones; create job --from=cronjob', async () => {
    // The real CronJob controller, in this process, on a clock 20× real time (a minute is 3 s).
    const clock = new FastClock(20);
    const client = new ApiClient({ ...(await loadKubeconfig(kubeconfig)), timeoutMs: 10_000 });
    const stop = new AbortController();
    const cm = await startControllerManager({ client, logger: noopLogger, signal: stop.signal, clock, controllers: ['cronjob'] });
    try {
      const create = await k.try('create', 'cronjob', 'tick', `--image=${busybox}`, '--schedule=*/1 * * * *', '--', 'true');
      assert.equal(create.code, 0, create.stderr);
      await k('patch', 'cronjob', 'tick', '--type=merge', '-p', JSON.stringify({ spec: { successfulJobsHistoryLimit: 2 } }));
      const seen = new Set<string>();
      await pollUntil('4 Jobs made by the CronJob', async () => {
        for (const n of (await k('get', 'jobs', '-o', 'name')).split('\n')) if (/^job\.batch\/tick-\d+$/.test(n)) seen.add(n.slice('job.batch/'.length));
        return seen.size >= 4 ? true : undefined;
      }, { timeoutMs: 120_000, intervalMs: 250 });
      await k('patch', 'cronjob', 'tick', '--type=merge', '-p', '{"spec":{"suspend":true}}');
      const minutes = [...seen].map((n) => Number(n.slice('tick-'.length))).sort((a, b) => a - b);
      for (let i = 1; i < minutes.length; i++) assert.equal(minutes[i]! - minutes[i - 1]!, 1, `one Job per minute: ${minutes.join(',')}`);
      const kept = await pollUntil('history trimmed to 2', async () => {
        const rows = (await k('get', 'jobs', '--no-headers')).split('\n').filter((l) => l.startsWith('tick-'));
        return rows.length === 2 && rows.every((r) => /\sComplete\s/.test(r)) ? rows : undefined;
      }, { timeoutMs: 120_000, intervalMs: 250 });
      assert.equal(kept.length, 2);
      const cj = await k('get', 'cronjob', 'tick');
      assert.match(cj, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE/m);
      assert.match(cj, /^tick\s+\*\/1 \* \* \* \*\s+<none>\s+True\s+0\s+/m);
      const manual = await k.try('create', 'job', 'by-hand', '--from=cronjob/tick');
      assert.equal(manual.code, 0, manual.stderr);
      assert.equal((await k.try('wait', '--for=condition=complete', 'job/by-hand', '--timeout=120s')).code, 0);
      assert.equal((await k('get', 'job', 'by-hand', '-o', 'jsonpath={.metadata.annotations.cronjob\\.kubernetes\\.io/instantiate}')).trim(), 'manual');
    } finally {
      stop.abort();
      await cm.close();
      client.close();
    }
  });

  it('a DaemonSet runs one pod per node and rolls an update; history and undo', async () => {
    await k('apply', '-f', manifest('ds', [{
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agentd', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agentd' } },
        template: { metadata: { labels: { app: 'agentd' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: busybox, command: ['sleep', '3600'] }] } },
      },
    }]));
    const rs = await k.try('rollout', 'status', 'ds/agentd', '--timeout=180s');
    assert.equal(rs.code, 0, rs.stderr);
    assert.match(rs.stdout, /daemon set "agentd" successfully rolled out/);
    const first = (await pods('app=agentd')).filter((p) => !p.deleting);
    assert.deepEqual(first.map((p) => p.node).sort(), ['wl-node-1', 'wl-node-2']);
    assert.match(await k('get', 'ds', 'agentd'), /^agentd\s+2\s+2\s+2\s+2\s+2\s+<none>\s+/m);
    await k('set', 'env', 'ds/agentd', 'VERSION=2');
    const rolled = await k.try('rollout', 'status', 'ds/agentd', '--timeout=180s');
    assert.equal(rolled.code, 0, rolled.stderr);
    const second = (await pods('app=agentd')).filter((p) => !p.deleting);
    assert.equal(second.length, 2);
    assert.ok(second.every((p) => !first.some((f) => f.uid === p.uid)), 'both pods replaced');
    const history = await k('rollout', 'history', 'ds/agentd');
    assert.match(history, /^REVISION\s+CHANGE-CAUSE/m);
    assert.match(history, /^1\s+/m);
    assert.match(history, /^2\s+/m);
    assert.equal((await k.try('rollout', 'undo', 'ds/agentd')).code, 0);
    assert.equal((await k.try('rollout', 'status', 'ds/agentd', '--timeout=180s')).code, 0);
    assert.match(await k('rollout', 'history', 'ds/agentd'), /^3\s+/m);
    assert.equal((await k('get', 'ds', 'agentd', '-o', 'jsonpath={.spec.template.spec.containers[0].env}')).trim(), '');
    await k('delete', 'ds', 'agentd', '--wait=false');
  });

  it('a hostNetwork DaemonSet pod starts, on the node network with the node hostname', async () => {
    await k('apply', '-f', manifest('hostnet', [{
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'hostnet', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'hostnet' } },
        template: { metadata: { labels: { app: 'hostnet' } }, spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: busybox, command: ['sleep', '3600'] }] } },
      },
    }]));
    assert.equal((await k.try('rollout', 'status', 'ds/hostnet', '--timeout=180s')).code, 0);
    const ps = (await pods('app=hostnet')).filter((p) => !p.deleting);
    assert.equal(ps.length, 2);
    for (const p of ps) {
      assert.equal(p.phase, 'Running');
      assert.equal(p.ip, p.hostIP, 'a hostNetwork pod has the node IP');
      assert.equal((await k('exec', p.name, '--', 'hostname')).trim(), hostname(), 'shares the node UTS namespace');
    }
    await k('delete', 'ds', 'hostnet', '--wait=false');
  });

  it('a 3-replica StatefulSet starts web-0..2 in order on local-path volumes, keeps data across a pod delete, scales down in reverse', async () => {
    await k('apply', '-f', manifest('web', [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'nginx', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ port: 80 }] } },
      {
        apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: 3, serviceName: 'nginx', selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: busybox, command: ['sh', '-c', 'hostname >> /data/starts; sleep 3600'], volumeMounts: [{ name: 'www', mountPath: '/data' }] }] },
          },
          volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } }],
        },
      },
    ]));
    const rs = await k.try('rollout', 'status', 'sts/web', '--timeout=240s');
    assert.equal(rs.code, 0, rs.stderr);
    const ps = await pods('app=web');
    const by = new Map(ps.map((p) => [p.name, p]));
    assert.deepEqual([...by.keys()].sort(), ['web-0', 'web-1', 'web-2']);
    for (const [prev, next] of [['web-0', 'web-1'], ['web-1', 'web-2']] as const) {
      assert.ok(Date.parse(by.get(next)!.created) >= Date.parse(by.get(prev)!.readySince!), `${next} was created only after ${prev} was ready`);
    }
    assert.match(await k('get', 'sts', 'web'), /^web\s+3\/3\s+/m);
    assert.match(await k('rollout', 'history', 'sts/web'), /^1\s+/m);
    const pvcs = await k('get', 'pvc', '--no-headers');
    for (const n of ['www-web-0', 'www-web-1', 'www-web-2']) assert.match(pvcs, new RegExp(`^${n}\\s+Bound\\s+pvc-\\S+\\s+16Mi\\s+RWO\\s+local-path\\s+`, 'm'));
    const pvName = (await k('get', 'pvc', 'www-web-1', '-o', 'jsonpath={.spec.volumeName}')).trim();
    const pvPath = (await k('get', 'pv', pvName, '-o', 'jsonpath={.spec.hostPath.path}')).trim();
    const home = by.get('web-1')!.node;
    const agentRoot = labPaths(home === 'wl-node-1' ? dir1 : dir2).agentRoot;
    assert.equal(pvPath, join(agentRoot, 'local-path', pvName), 'the volume lives under its node agent root');
    assert.equal(readFileSync(join(pvPath, 'starts'), 'utf8'), 'web-1\n');

    await k('exec', 'web-1', '--', 'sh', '-c', 'echo keep-me > /data/token');
    await k('delete', 'pod', 'web-1');
    const back = await pollUntil('web-1 back', async () => {
      const p = (await pods('app=web')).find((x) => x.name === 'web-1' && x.uid !== by.get('web-1')!.uid && x.phase === 'Running' && !x.deleting);
      return p;
    }, { timeoutMs: 120_000, intervalMs: 250 });
    assert.equal(back.node, home, 'the replacement runs where its volume is');
    assert.equal((await k('exec', 'web-1', '--', 'cat', '/data/token')).trim(), 'keep-me');
    assert.equal((await k('exec', 'web-1', '--', 'cat', '/data/starts')).trim(), 'web-1\nweb-1');

    // A pod is marked for deletion only for its grace second: a kubectl poll can miss the mark, so the
    // order is read from a watch from the list's resourceVersion, which sees every change in sequence.
    const client = new ApiClient({ ...(await loadKubeconfig(kubeconfig)), timeoutMs: 10_000 });
    const watching = new AbortController();
    const order: string[] = [];
    try {
      const list = await client.resource(PODS, 'default').list({ labelSelector: 'app=web' });
      const watched = (async () => {
        try {
          for await (const e of client.resource(PODS, 'default').watch({ labelSelector: 'app=web', resourceVersion: list.metadata.resourceVersion, signal: watching.signal })) {
            if (e.type === 'BOOKMARK' || e.type === 'ERROR') continue;
            const p = e.object as Pod;
            if ((e.type === 'DELETED' || p.metadata.deletionTimestamp) && !order.includes(p.metadata.name!)) order.push(p.metadata.name!);
          }
        } catch (err) {
          if (!watching.signal.aborted) throw err;
        }
      })();
      await k('scale', 'sts', 'web', '--replicas=1');
      await pollUntil('only web-0 left', async () => {
        const left = await pods('app=web');
        return left.length === 1 && left[0]!.name === 'web-0' ? true : undefined;
      }, { timeoutMs: 120_000, intervalMs: 250 });
      // A list can be ahead of the watch: wait for the watch to see both go too.
      await pollUntil('the watch to see web-2 and web-1 go', () => order.length >= 2, { timeoutMs: 30_000, intervalMs: 50 });
      watching.abort();
      await watched;
    } finally {
      watching.abort();
      client.close();
    }
    assert.deepEqual(order, ['web-2', 'web-1']);
    // Leave the nodes clean: pods go, then their bind mounts.
    await k('delete', 'sts', 'web');
    await pollUntil('web pods gone', async () => ((await pods('app=web')).length === 0 ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    assert.ok(existsSync(pvPath), 'claims and their data outlive the StatefulSet (retention policy Retain)');
  });
});
