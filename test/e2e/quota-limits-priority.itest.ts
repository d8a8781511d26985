// The real kubectl against the server's ResourceQuota, LimitRange and Priority admission and the
// quota controller: `kubectl create quota` then the (n+1)-th pod refused with upstream's message,
// two creates racing for the last slot (many rounds) admitting exactly one, LimitRange defaults
// filled, and priority classes resolved into pods.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const pod = (name: string, extra = ''): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  containers: [{name: app, image: busybox:1.36${extra}}]
`;

/** Waits until the quota controller has counted `quota` (status.used has every hard name). */
async function counted(k: Kubectl, ns: string, quota: string, want: string): Promise<void> {
  await pollUntil(`quota ${quota} counted with pods=${want}`, async () => (await k(['-n', ns, 'get', 'quota', quota, '-o', 'jsonpath={.status.used.pods}'])).stdout === want, { timeoutMs: 15_000 });
}

describe('quota, limits and priority with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv({ controllers: [...NAMESPACE_SETUP_CONTROLLERS, 'resourcequota'] });
    k = await env.newKubectl();
  });
  after(() => env?.close());

  it('kubectl create quota; the (n+1)-th pod is refused with upstream’s message; deleting one frees its slot', async () => {
    assert.equal((await k(['create', 'ns', 'q1'])).code, 0);
    const created = await k(['-n', 'q1', 'create', 'quota', 'pods-2', '--hard=pods=2']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^resourcequota\/pods-2 created$/m);
    await counted(k, 'q1', 'pods-2', '0');
    for (const n of ['a', 'b']) assert.equal((await k(['-n', 'q1', 'create', '-f', '-'], { stdin: pod(n) })).code, 0);
    const refused = await k(['-n', 'q1', 'create', '-f', '-'], { stdin: pod('c') });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Error from server \(Forbidden\): error when creating "STDIN": pods "c" is forbidden: exceeded quota: pods-2, requested: pods=1, used: pods=2, limited: pods=2/);
    const described = await k(['-n', 'q1', 'describe', 'quota', 'pods-2']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /pods\s+2\s+2/);
    const table = await k(['-n', 'q1', 'get', 'quota']);
    assert.match(table.stdout, /^NAME\s+AGE\s+REQUEST\s+LIMIT$/m);
    assert.match(table.stdout, /^pods-2\s+\S+\s+pods: 2\/2\s*$/m);
    assert.equal((await k(['-n', 'q1', 'delete', 'pod', 'a', '--grace-period=0', '--force'])).code, 0);
    await counted(k, 'q1', 'pods-2', '1');
    assert.equal((await k(['-n', 'q1', 'create', '-f', '-'], { stdin: pod('c') })).code, 0);
  });

  it('a compute quota refuses a pod without requests (must specify), and counts one with them', async () => {
    assert.equal((await k(['create', 'ns', 'q2'])).code, 0);
    assert.equal((await k(['-n', 'q2', 'create', 'quota', 'compute', '--hard=requests.cpu=1,limits.cpu=2,pods=5'])).code, 0);
    await counted(k, 'q2', 'compute', '0');
    const bare = await k(['-n', 'q2', 'create', '-f', '-'], { stdin: pod('bare') });
    assert.match(bare.stderr, /pods "bare" is forbidden: failed quota: compute: must specify limits\.cpu for: app; requests\.cpu for: app/);
    const ok = await k(['-n', 'q2', 'create', '-f', '-'], { stdin: pod('ok', ', resources: {requests: {cpu: 600m}, limits: {cpu: "1"}}') });
    assert.equal(ok.code, 0, ok.stderr);
    const over = await k(['-n', 'q2', 'create', '-f', '-'], { stdin: pod('over', ', resources: {requests: {cpu: 600m}, limits: {cpu: "1"}}') });
    assert.match(over.stderr, /pods "over" is forbidden: exceeded quota: compute, requested: requests\.cpu=600m, used: requests\.cpu=600m, limited: requests\.cpu=1/);
  });

  it('two creates racing for the last slot admit exactly one, every round', async () => {
    assert.equal((await k(['create', 'ns', 'race'])).code, 0);
    const rounds = 25;
    for (let i = 0; i < rounds; i++) {
      // Each round's quota allows the pods already there plus one.
      const name = `last-${i}`;
      assert.equal((await k(['-n', 'race', 'create', 'quota', name, `--hard=pods=${i + 1}`])).code, 0);
      await counted(k, 'race', name, String(i));
      const [x, y] = await Promise.all([
        env.api('POST', '/api/v1/namespaces/race/pods', { body: JSON.stringify({ metadata: { name: `x-${i}` }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } }) }),
        env.api('POST', '/api/v1/namespaces/race/pods', { body: JSON.stringify({ metadata: { name: `y-${i}` }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } }) }),
      ]);
      const codes = [x.status, y.status].sort();
      assert.deepEqual(codes, [201, 403], `round ${i}: ${x.body} ${y.body}`);
      const refused = x.status === 403 ? x.json() : y.json();
      assert.match(refused.message, new RegExp(`exceeded quota: ${name}, requested: pods=1, used: pods=${i + 1}, limited: pods=${i + 1}`));
      assert.equal((await k(['-n', 'race', 'delete', 'quota', name])).code, 0);
    }
    const pods = await k(['-n', 'race', 'get', 'pods', '-o', 'name']);
    assert.equal(pods.stdout.trim().split('\n').length, rounds);
  });

  it('a LimitRange fills a container’s requests and limits and refuses one above its max', async () => {
    assert.equal((await k(['create', 'ns', 'lr'])).code, 0);
    const lr = `apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 128Mi}
    defaultRequest: {cpu: 100m, memory: 64Mi}
    max: {cpu: "1"}
`;
    assert.equal((await k(['-n', 'lr', 'apply', '-f', '-'], { stdin: lr })).code, 0);
    assert.equal((await k(['-n', 'lr', 'create', '-f', '-'], { stdin: pod('filled') })).code, 0);
    const res = await k(['-n', 'lr', 'get', 'pod', 'filled', '-o', 'jsonpath={.spec.containers[0].resources}']);
    assert.deepEqual(JSON.parse(res.stdout), { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '64Mi' } });
    const ann = await k(['-n', 'lr', 'get', 'pod', 'filled', '-o', 'jsonpath={.metadata.annotations.kubernetes\\.io/limit-ranger}']);
    assert.equal(ann.stdout, 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');
    const big = await k(['-n', 'lr', 'create', '-f', '-'], { stdin: pod('big', ', resources: {limits: {cpu: "2"}}') });
    assert.match(big.stderr, /pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/);
  });

  it('kubectl create priorityclass; pods get its value, the global default, or are refused for an unknown class', async () => {
    const classes = await k(['get', 'priorityclasses', '-o', 'name']);
    assert.match(classes.stdout, /priorityclass\.scheduling\.k8s\.io\/system-cluster-critical/);
    assert.match(classes.stdout, /priorityclass\.scheduling\.k8s\.io\/system-node-critical/);
    const pcTable = await k(['get', 'pc', 'system-node-critical']);
    assert.match(pcTable.stdout, /^system-node-critical\s+2000001000\s+false\s+\S+\s+PreemptLowerPriority$/m);
    const high = await k(['create', 'priorityclass', 'high', '--value=1000', '--description=test', '--preemption-policy=Never']);
    assert.equal(high.code, 0, high.stderr);
    assert.equal((await k(['create', 'priorityclass', 'low', '--value=10', '--global-default'])).code, 0);
    const second = await k(['create', 'priorityclass', 'low2', '--value=5', '--global-default']);
    assert.match(second.stderr, /PriorityClass low is already marked as default\. Only one default can exist/);
    const tooHigh = await k(['create', 'priorityclass', 'huge', '--value=1000000001']);
    assert.match(tooHigh.stderr, /maximum allowed value of a user defined priority is 1000000000/);
    assert.equal((await k(['create', 'ns', 'prio'])).code, 0);
    assert.equal((await k(['-n', 'prio', 'create', '-f', '-'], { stdin: pod('p-high').replace('spec:\n', 'spec:\n  priorityClassName: high\n') })).code, 0);
    const got = await k(['-n', 'prio', 'get', 'pod', 'p-high', '-o', 'jsonpath={.spec.priority} {.spec.preemptionPolicy}']);
    assert.equal(got.stdout, '1000 Never');
    assert.equal((await k(['-n', 'prio', 'create', '-f', '-'], { stdin: pod('p-default') })).code, 0);
    const dflt = await k(['-n', 'prio', 'get', 'pod', 'p-default', '-o', 'jsonpath={.spec.priorityClassName} {.spec.priority}']);
    assert.equal(dflt.stdout, 'low 10');
    assert.equal((await k(['-n', 'prio', 'create', '-f', '-'], { stdin: pod('p-crit').replace('spec:\n', 'spec:\n  priorityClassName: system-node-critical\n') })).code, 0);
    const missing = await k(['-n', 'prio', 'create', '-f', '-'], { stdin: pod('p-none').replace('spec:\n', 'spec:\n  priorityClassName: nope\n') });
    assert.match(missing.stderr, /pods "p-none" is forbidden: no PriorityClass with name nope was found/);
  });
});
