// events.k8s.io/v1 Events with the real kubectl: one storage with core v1 Events, converted both
// ways (an Event created through events.k8s.io is read back through v1 and the other way round),
// strict validation of writes through events.k8s.io, and `kubectl get events.events.k8s.io`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const EVENT_V1 = `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: pulled, namespace: ev}
eventTime: "2026-01-01T00:00:00.000000Z"
series: {count: 2, lastObservedTime: "2026-01-01T00:01:00.000000Z"}
reportingController: example.com/puller
reportingInstance: puller-1
action: Pull
reason: Pulled
type: Normal
note: image pulled
regarding: {kind: Pod, name: web, namespace: ev}
related: {kind: Node, name: node-a}
`;

describe('events.k8s.io/v1 with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv();
    k = await env.newKubectl();
    assert.equal((await k(['create', 'ns', 'ev'])).code, 0);
  });
  after(() => env?.close());

  it('an Event created through events.k8s.io/v1 reads back through core v1, converted', async () => {
    const created = await k(['create', '-f', '-'], { stdin: EVENT_V1 });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^event\.events\.k8s\.io\/pulled created$/m);
    const core = (await env.api('GET', '/api/v1/namespaces/ev/events/pulled')).json();
    assert.equal(core.apiVersion, 'v1');
    assert.equal(core.message, 'image pulled');
    assert.deepEqual(core.involvedObject, { kind: 'Pod', name: 'web', namespace: 'ev' });
    assert.equal(core.reportingComponent, 'example.com/puller');
    assert.equal(core.reportingInstance, 'puller-1');
    assert.deepEqual(core.series, { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' });
    assert.deepEqual(core.related, { kind: 'Node', name: 'node-a' });
    assert.equal(core.note, undefined);
    const table = await k(['-n', 'ev', 'get', 'events.events.k8s.io']);
    assert.match(table.stdout, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    assert.match(table.stdout, /Normal\s+Pulled\s+pod\/web\s+image pulled/);
  });

  it('a core v1 Event reads through events.k8s.io/v1 with its deprecated* fields', async () => {
    const created = await k(['create', '-f', '-'], {
      stdin: 'apiVersion: v1\nkind: Event\nmetadata: {name: old, namespace: ev}\ninvolvedObject: {kind: Pod, name: web, namespace: ev}\nreason: Started\nmessage: started\ntype: Normal\nsource: {component: kubelet, host: node-a}\nfirstTimestamp: "2026-01-01T00:00:00Z"\nlastTimestamp: "2026-01-01T00:02:00Z"\ncount: 4\n',
    });
    assert.equal(created.code, 0, created.stderr);
    const got = await k(['-n', 'ev', 'get', 'events.v1.events.k8s.io', 'old', '-o', 'json']);
    assert.equal(got.code, 0, got.stderr);
    const v1 = JSON.parse(got.stdout);
    assert.equal(v1.apiVersion, 'events.k8s.io/v1');
    assert.equal(v1.note, 'started');
    assert.deepEqual(v1.regarding, { kind: 'Pod', name: 'web', namespace: 'ev' });
    assert.deepEqual(v1.deprecatedSource, { component: 'kubelet', host: 'node-a' });
    assert.equal(v1.deprecatedCount, 4);
    assert.equal(v1.deprecatedFirstTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(v1.deprecatedLastTimestamp, '2026-01-01T00:02:00Z');
    assert.equal(v1.message, undefined);
    const list = (await env.api('GET', '/apis/events.k8s.io/v1/namespaces/ev/events')).json();
    assert.deepEqual(list.items.map((e: { metadata: { name: string } }) => e.metadata.name).sort(), ['old', 'pulled']);
  });

  it('writes through events.k8s.io/v1 are validated strictly, as upstream', async () => {
    const bad = await k(['create', '-f', '-'], { stdin: EVENT_V1.replace('name: pulled', 'name: bad').replace('reportingInstance: puller-1\n', '').replace('type: Normal\n', 'type: Normal\ndeprecatedCount: 3\n') });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /reportingInstance: Required value/);
    assert.match(bad.stderr, /count: Invalid value: "": needs to be unset/);
    const changed = await env.api('PATCH', '/apis/events.k8s.io/v1/namespaces/ev/events/pulled', { body: JSON.stringify({ note: 'other' }), contentType: 'application/merge-patch+json' });
    assert.equal(changed.status, 422, changed.body);
    assert.match(changed.body, /message: Invalid value: \\"other\\": field is immutable/);
    const series = await env.api('PATCH', '/apis/events.k8s.io/v1/namespaces/ev/events/pulled', { body: JSON.stringify({ series: { count: 3, lastObservedTime: '2026-01-01T00:02:00.000000Z' } }), contentType: 'application/merge-patch+json' });
    assert.equal(series.status, 200, series.body);
    assert.equal((await env.api('GET', '/api/v1/namespaces/ev/events/pulled')).json().series.count, 3);
  });
});
