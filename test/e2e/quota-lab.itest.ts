// Quota, limits, priority, Ingress, legacy tokens and the HPA with the real kubectl on a one-node
// lab (`nodelet lab up` on private ports, bridge nle-qta, cluster CIDR 10.217.0.0/16), real
// containerd underneath — what quota-limits-priority, legacy-sa-token and kubectl-autoscale check
// against a bare API server, here with pods that really run:
// - a ResourceQuota refuses the (n+1)-th pod with upstream's 403 message; two `kubectl run`s racing
//   for the last slot admit exactly one, in each of three rounds;
// - a LimitRange fills a pod's requests and limits, and the pod runs with them;
// - `kubectl create quota|priorityclass|ingress` work and what they made is acted on or shown;
// - a legacy service-account token Secret is filled and its token authenticates as the account;
// - an autoscaling/v2 HPA (cpu 50 %, short stabilization windows) scales a Deployment of
//   CPU-burning pods up, then, once every pod stops burning (`kubectl exec` touches the file its
//   loop watches), back down to one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

const NODE = 'qta-node';

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('quota, limits, priority, ingress, legacy tokens and the HPA with kubectl on a lab', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-qta-'));
  let lab: Parameters<typeof labUp>[0];
  let kubeconfig = '';
  let k: Kubectl;
  let busybox = '';
  const file = (name: string, text: string): string => {
    const f = join(stateDir, name);
    writeFileSync(f, text);
    return f;
  };
  const jsonpath = async (...args: string[]): Promise<string> => (await k('get', ...args.slice(0, -1), '-o', `jsonpath=${args.at(-1)!}`)).trim();
  const run = (ns: string, name: string, ...extra: string[]) =>
    k.try('-n', ns, 'run', name, `--image=${busybox}`, '--restart=Never', ...extra, '--', 'sleep', '3600');
  const usedPods = (ns: string, quota: string) => pollUntil(`quota ${quota} counted`, async () => {
    const used = await jsonpath('-n', ns, 'quota', quota, '{.status.used.pods}');
    return used === '' ? undefined : used;
  }, { timeoutMs: 30_000 });

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.217.0.0/16', bridge: 'nle-qta', nodeName: NODE, nodeApiPort: nodePort, healthzPort };
    const up = await labUp(lab);
    kubeconfig = up.kubeconfig;
    busybox = up.images.busybox;
    k = kubectl(kubeconfig);
  });

  after(async () => {
    // No namespace deletion first: their `sleep` pods ignore SIGTERM and would hold it for their
    // whole 30 s grace period; lab down removes every sandbox through CRI, then the state.
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a ResourceQuota refuses the (n+1)-th pod with upstream’s 403 message, and racing creates for the last slot admit one', { timeout: 300_000 }, async () => {
    await k('create', 'ns', 'qlab');
    assert.match(await k('-n', 'qlab', 'create', 'quota', 'pods-2', '--hard=pods=2'), /^resourcequota\/pods-2 created$/m);
    assert.equal(await usedPods('qlab', 'pods-2'), '0');
    for (const n of ['a', 'b']) assert.equal((await run('qlab', n)).code, 0);
    const refused = await run('qlab', 'c');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /^Error from server \(Forbidden\): pods "c" is forbidden: exceeded quota: pods-2, requested: pods=1, used: pods=2, limited: pods=2$/m);
    await k('-n', 'qlab', 'wait', '--for=condition=Ready', 'pod/a', 'pod/b', '--timeout=120s');
    assert.match(await k('-n', 'qlab', 'get', 'quota', 'pods-2'), /^pods-2\s+\S+\s+pods: 2\/2\s*$/m);
    await k('-n', 'qlab', 'delete', 'quota', 'pods-2');

    // Each round's quota allows the pods there plus one; two kubectl processes race for it.
    for (let round = 0; round < 3; round++) {
      const have = 2 + round;
      const name = `last-${round}`;
      await k('-n', 'qlab', 'create', 'quota', name, `--hard=pods=${have + 1}`);
      assert.equal(await usedPods('qlab', name), String(have));
      const results = await Promise.all([run('qlab', `x-${round}`), run('qlab', `y-${round}`)]);
      assert.deepEqual(results.map((r) => r.code === 0).sort(), [false, true], JSON.stringify(results));
      const loser = results.find((r) => r.code !== 0)!;
      assert.match(loser.stderr, new RegExp(`is forbidden: exceeded quota: ${name}, requested: pods=1, used: pods=${have + 1}, limited: pods=${have + 1}`));
      await k('-n', 'qlab', 'delete', 'quota', name);
    }
    const pods = (await k('-n', 'qlab', 'get', 'pods', '-o', 'name')).trim().split('\n');
    assert.equal(pods.length, 5, pods.join(' '));
  });

  it('a LimitRange fills a pod’s requests and limits, and the pod runs with them', { timeout: 180_000 }, async () => {
    await k('create', 'ns', 'lrlab');
    await k('-n', 'lrlab', 'apply', '-f', file('lr.yaml', `apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 200m, memory: 64Mi}
    defaultRequest: {cpu: 50m, memory: 32Mi}
`));
    assert.equal((await run('lrlab', 'filled')).code, 0);
    const res = JSON.parse(await jsonpath('-n', 'lrlab', 'pod', 'filled', '{.spec.containers[0].resources}')) as unknown;
    assert.deepEqual(res, { limits: { cpu: '200m', memory: '64Mi' }, requests: { cpu: '50m', memory: '32Mi' } });
    assert.equal(await jsonpath('-n', 'lrlab', 'pod', 'filled', '{.metadata.annotations.kubernetes\\.io/limit-ranger}'),
      'LimitRanger plugin set: cpu, memory request for container filled; cpu, memory limit for container filled');
    await k('-n', 'lrlab', 'wait', '--for=condition=Ready', 'pod/filled', '--timeout=120s');
    assert.equal(await jsonpath('-n', 'lrlab', 'pod', 'filled', '{.status.qosClass}'), 'Burstable');
  });

  it('kubectl create priorityclass|ingress work; a pod gets the class’s priority and runs; the Ingress is shown', { timeout: 180_000 }, async () => {
    assert.match(await k('create', 'priorityclass', 'lab-high', '--value=1000', '--description=lab'), /^priorityclass\.scheduling\.k8s\.io\/lab-high created$/m);
    await k('create', 'ns', 'plab');
    const made = await run('plab', 'prio', '--overrides={"spec":{"priorityClassName":"lab-high"}}');
    assert.equal(made.code, 0, made.stderr);
    assert.equal(await jsonpath('-n', 'plab', 'pod', 'prio', '{.spec.priority}'), '1000');
    await k('-n', 'plab', 'wait', '--for=condition=Ready', 'pod/prio', '--timeout=120s');
    assert.match(await k('-n', 'plab', 'create', 'ingress', 'web', '--class=lab', '--rule=web.example/=web:80'), /^ingress\.networking\.k8s\.io\/web created$/m);
    assert.match(await k('-n', 'plab', 'get', 'ingress', 'web'), /^web\s+lab\s+web\.example\s+80\s+\S+$/m);
    assert.equal(await jsonpath('-n', 'plab', 'ingress', 'web', '{.spec.rules[0].http.paths[0].backend.service.name}'), 'web');
  });

  it('a legacy service-account token Secret is filled by the token controller and its token authenticates', { timeout: 120_000 }, async () => {
    await k('create', 'ns', 'toklab');
    await k('-n', 'toklab', 'create', 'sa', 'builder');
    await k('-n', 'toklab', 'apply', '-f', file('tok.yaml', `apiVersion: v1
kind: Secret
metadata:
  name: builder-token
  annotations: {kubernetes.io/service-account.name: builder}
type: kubernetes.io/service-account-token
`));
    const encoded = await pollUntil('the token Secret filled', async () => {
      const t = await jsonpath('-n', 'toklab', 'secret', 'builder-token', '{.data.token}');
      return t === '' ? undefined : t;
    }, { timeoutMs: 30_000 });
    const token = Buffer.from(encoded, 'base64').toString();
    // A kubeconfig with the token alone: the admin's client certificate would authenticate first.
    const server = await k('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}');
    const ca = await k('config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}');
    const tokDir = mkdtempSync(join(stateDir, 'tok-'));
    const tokenConfig = join(tokDir, 'kubeconfig');
    writeFileSync(tokenConfig, `apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]
users: [{name: builder, user: {token: "${token}"}}]
contexts: [{name: lab, context: {cluster: lab, user: builder, namespace: toklab}}]
current-context: lab
`, { mode: 0o600 });
    const asBuilder = kubectl(tokenConfig);
    assert.equal(await asBuilder('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'), 'system:serviceaccount:toklab:builder');
    const denied = await asBuilder.try('get', 'pods');
    assert.match(denied.stderr, /pods is forbidden: User "system:serviceaccount:toklab:builder" cannot list resource "pods" in API group "" in the namespace "toklab"/);
    await k('-n', 'toklab', 'create', 'rolebinding', 'builder-view', '--clusterrole=view', '--serviceaccount=toklab:builder');
    await pollUntil('the token lists pods once bound to view', async () => (await asBuilder.try('get', 'pods')).code === 0, { timeoutMs: 15_000 });
  });

  it('an HPA scales a Deployment of CPU-burning pods up, and back down when the load stops', { timeout: 480_000 }, async () => {
    await k('create', 'ns', 'hpalab');
    // Each pod burns until /tmp/stop exists, then sleeps; 20m requested, so one busy loop is far
    // above 50 %. At most two replicas: each burning pod takes a core of a shared machine.
    await k('-n', 'hpalab', 'apply', '-f', file('hpa.yaml', `apiVersion: apps/v1
kind: Deployment
metadata: {name: burn}
spec:
  replicas: 1
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: ${busybox}
        command: [sh, -c, 'while [ ! -f /tmp/stop ]; do :; done; exec sleep 3600']
        resources: {requests: {cpu: 20m}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: burn}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burn}
  minReplicas: 1
  maxReplicas: 2
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
  behavior:
    scaleUp: {stabilizationWindowSeconds: 0}
    scaleDown: {stabilizationWindowSeconds: 5, policies: [{type: Pods, value: 1, periodSeconds: 5}]}
`));
    const replicas = async (): Promise<string> => jsonpath('-n', 'hpalab', 'deployment', 'burn', '{.spec.replicas}');
    const up = await pollUntil('the HPA scales burn to 2', async () => ((await replicas()) === '2' ? await k('-n', 'hpalab', 'get', 'hpa', 'burn') : undefined), {
      timeoutMs: 240_000, intervalMs: 3000, detail: async () => k('-n', 'hpalab', 'describe', 'hpa', 'burn'),
    });
    // kubectl's TARGETS cell: current utilization far above the 50 % target.
    const cell = /^burn\s+Deployment\/burn\s+cpu:\s*(\d+)%\/50%\s+1\s+2\s+\d+\s+\S+$/m.exec(up);
    assert.ok(cell && Number(cell[1]) > 50, up);
    const events = await k('-n', 'hpalab', 'get', 'events', '--field-selector', 'involvedObject.name=burn,reason=SuccessfulRescale', '-o', 'jsonpath={.items[*].message}');
    assert.match(events, /New size: 2; reason: cpu resource utilization \(percentage of request\) above target/);

    // Stop the load in every pod, including one that is still starting, until the HPA scales down.
    await pollUntil('the HPA scales burn back to 1', async () => {
      const names = (await k('-n', 'hpalab', 'get', 'pods', '-l', 'app=burn', '--field-selector=status.phase=Running', '-o', 'name')).trim().split('\n').filter(Boolean);
      for (const n of names) await k.try('-n', 'hpalab', 'exec', n, '--', 'touch', '/tmp/stop');
      return (await replicas()) === '1';
    }, { timeoutMs: 240_000, intervalMs: 5000, detail: async () => k('-n', 'hpalab', 'describe', 'hpa', 'burn') });
    const down = await k('-n', 'hpalab', 'get', 'events', '--field-selector', 'involvedObject.name=burn,reason=SuccessfulRescale', '-o', 'jsonpath={.items[*].message}');
    assert.match(down, /New size: 1; reason: All metrics below target/);
  });
});
