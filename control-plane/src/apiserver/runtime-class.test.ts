// RuntimeClasses and their admission plugin against the real API machinery (SQLite in a temp dir).
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Toleration } from '@nodelet/api';
import { startTestApiServer, type TestApiServer, type TestReply } from './testing/test-server.js';
import { mergeTolerations } from './admission/runtime-class.js';


test('mergeTolerations keeps the wider of two overlapping tolerations, in order', () => {
  const exists: Toleration = { key: 'gpu', operator: 'Exists' };
  const equal: Toleration = { key: 'gpu', operator: 'Equal', value: 'a100', effect: 'NoSchedule' };
  const other: Toleration = { key: 'zone', operator: 'Equal', value: 'x' };
  assert.deepEqual(mergeTolerations([equal, other], [exists]), [other, exists]);
  assert.deepEqual(mergeTolerations([exists], [equal]), [exists]);
  assert.deepEqual(mergeTolerations([other], [other]), [other]);
  const all: Toleration = { operator: 'Exists' };
  assert.deepEqual(mergeTolerations([equal, other], [all]), [all]);
  // A NoExecute toleration with a shorter time does not cover a longer one.
  const short: Toleration = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
  const long: Toleration = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 };
  assert.deepEqual(mergeTolerations([long], [short]), [long]);
  assert.deepEqual(mergeTolerations([short], [long]), [long]);
});

describe('RuntimeClass (node.k8s.io/v1) and RuntimeClass admission', () => {
  let srv: TestApiServer;
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestReply> => srv.call(method, path, body, { headers });
  const RC = '/apis/node.k8s.io/v1/runtimeclasses';
  const pod = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec } });

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('validates the handler, keeps it immutable and prints NAME HANDLER AGE', async () => {
    const bad = await call('POST', RC, { metadata: { name: 'bad' }, handler: 'Not_A_Label' });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.details.causes[0].field, 'handler');
    assert.equal((await call('POST', RC, { metadata: { name: 'none' } })).json.details.causes[0].field, 'handler');
    const rc = await call('POST', RC, {
      metadata: { name: 'crun' },
      handler: 'crun',
      overhead: { podFixed: { cpu: '100m', memory: '20Mi' } },
      scheduling: { nodeSelector: { 'runtime/crun': 'yes' }, tolerations: [{ key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }] },
    });
    assert.equal(rc.status, 201, JSON.stringify(rc.json));
    const changed = await call('PUT', `${RC}/crun`, { ...rc.json, handler: 'runc' });
    assert.equal(changed.status, 422);
    assert.match(changed.json.message, /handler: Invalid value: "runc": field is immutable/);
    const table = await call('GET', RC, undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Handler', 'Age']);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 2), ['crun', 'crun']);
  });

  it('a pod naming the class gets its overhead, node selector and tolerations', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/pods', pod('p1', { runtimeClassName: 'crun', nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'sandboxed', operator: 'Equal', value: 'x', effect: 'NoSchedule' }] }));
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.json.spec.overhead, { cpu: '100m', memory: '20Mi' });
    assert.deepEqual(r.json.spec.nodeSelector, { disk: 'ssd', 'runtime/crun': 'yes' });
    assert.deepEqual(r.json.spec.tolerations, [{ key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('refuses a missing class, a conflicting node selector and an overhead the class does not define', async () => {
    const missing = await call('POST', '/api/v1/namespaces/default/pods', pod('p2', { runtimeClassName: 'kata' }));
    assert.equal(missing.status, 403);
    assert.equal(missing.json.message, 'pods "p2" is forbidden: pod rejected: RuntimeClass "kata" not found');
    const conflict = await call('POST', '/api/v1/namespaces/default/pods', pod('p3', { runtimeClassName: 'crun', nodeSelector: { 'runtime/crun': 'no' } }));
    assert.equal(conflict.status, 403);
    assert.match(conflict.json.message, /conflict: runtimeClass\.scheduling\.nodeSelector\[runtime\/crun\] = yes; pod\.spec\.nodeSelector\[runtime\/crun\] = no/);
    const overhead = await call('POST', '/api/v1/namespaces/default/pods', pod('p4', { overhead: { cpu: '1' } }));
    assert.equal(overhead.status, 403);
    assert.match(overhead.json.message, /Pod Overhead set without corresponding RuntimeClass defined Overhead/);
    const mismatch = await call('POST', '/api/v1/namespaces/default/pods', pod('p5', { runtimeClassName: 'crun', overhead: { cpu: '1' } }));
    assert.match(mismatch.json.message, /Pod's Overhead doesn't match RuntimeClass's defined Overhead/);
  });
});
