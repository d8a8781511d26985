// The real kubectl against v1 ReplicationControllers and PodTemplates: an RC created with a
// defaulted selector gets its pods from the ReplicaSet controller code (owned as
// ReplicationController), `kubectl scale rc` goes through /scale, `get rc` and `get podtemplates`
// show upstream's columns, and a template its selector does not match is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const RC = `apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: busybox:1.36}]}
`;

describe('ReplicationController and PodTemplate with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv({ controllers: [...NAMESPACE_SETUP_CONTROLLERS, 'replicationcontroller'] });
    k = await env.newKubectl();
    assert.equal((await k(['create', 'ns', 'rc'])).code, 0);
  });
  after(() => env?.close());

  const ownedPods = async (): Promise<string[]> =>
    (await k(['-n', 'rc', 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {end}'])).stdout.trim().split(' ').filter(Boolean);

  it('an RC gets its pods, defaults its selector and labels, and kubectl scale rc resizes it', async () => {
    const created = await k(['-n', 'rc', 'create', '-f', '-'], { stdin: RC });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^replicationcontroller\/web created$/m);
    assert.equal((await k(['-n', 'rc', 'get', 'rc', 'web', '-o', 'jsonpath={.spec.selector.app} {.metadata.labels.app}'])).stdout, 'web web');
    await pollUntil('two pods owned by the RC', async () => (await ownedPods()).length === 2, { timeoutMs: 15_000 });
    assert.deepEqual(await ownedPods(), ['ReplicationController/web', 'ReplicationController/web']);
    await pollUntil('status.replicas 2', async () => (await k(['-n', 'rc', 'get', 'rc', 'web', '-o', 'jsonpath={.status.replicas}'])).stdout === '2', { timeoutMs: 15_000 });
    const table = await k(['-n', 'rc', 'get', 'rc', '-o', 'wide']);
    assert.match(table.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    assert.match(table.stdout, /^web\s+2\s+2\s+0\s+\S+\s+app\s+busybox:1\.36\s+app=web$/m);
    const scaled = await k(['-n', 'rc', 'scale', 'rc', 'web', '--replicas=3']);
    assert.equal(scaled.code, 0, scaled.stderr);
    assert.match(scaled.stdout, /replicationcontroller\/web scaled/);
    await pollUntil('three pods after scale', async () => (await ownedPods()).length === 3, { timeoutMs: 15_000 });
    const scale = await env.api('GET', '/api/v1/namespaces/rc/replicationcontrollers/web/scale');
    assert.equal(scale.json().status.selector, 'app=web');
    assert.equal(scale.json().spec.replicas, 3);
  });

  it('a selector that does not match the template is refused with upstream’s message', async () => {
    const bad = await k(['-n', 'rc', 'create', '-f', '-'], { stdin: RC.replace('name: web}', 'name: bad}').replace('replicas: 2', 'replicas: 1\n  selector: {app: other}') });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
  });

  it('a PodTemplate is stored, defaulted and listed', async () => {
    const created = await k(['-n', 'rc', 'create', '-f', '-'], {
      stdin: 'apiVersion: v1\nkind: PodTemplate\nmetadata: {name: tpl}\ntemplate:\n  metadata: {labels: {tier: db}}\n  spec: {containers: [{name: db, image: busybox:1.36}]}\n',
    });
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await k(['-n', 'rc', 'get', 'podtemplate', 'tpl', '-o', 'jsonpath={.template.spec.restartPolicy}'])).stdout, 'Always');
    const table = await k(['-n', 'rc', 'get', 'podtemplates']);
    assert.match(table.stdout, /^TEMPLATE\s+CONTAINERS\s+IMAGES\s+POD LABELS$/m);
    assert.match(table.stdout, /^tpl\s+db\s+busybox:1\.36\s+tier=db$/m);
  });
});
