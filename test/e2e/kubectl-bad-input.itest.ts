// Bad input against the API server: each case gets a Status reply with the right code and
// reason, and nothing is persisted (the store's revision does not move).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type ApiReply, type KubectlEnv } from './kubectl-harness.js';

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, extra: object = {}): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] }, ...extra });

function assertStatus(r: ApiReply, code: number, reason: string): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(r.status, code, r.body);
  const body = r.json();
  assert.equal(body.kind, 'Status');
  assert.equal(body.status, 'Failure');
  assert.equal(body.code, code);
  assert.equal(body.reason, reason);
  return body;
}

describe('bad input gets a Status and persists nothing', () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(() => env?.close());

  /**
   * Every key in the store with its last write. The control plane writes in the background while
   * a test runs (each server creates the `default/kubernetes` Service once it serves and keeps
   * its endpoint lease and the Endpoints/EndpointSlice listing it current; controllers and leader
   * election renew leases; events), so the revision alone cannot tell whether a failed request
   * wrote: what a request may not change is every other key.
   */
  async function snapshot(): Promise<Map<string, number>> {
    const background = /^\/registry\/(masterleases\/|leases\/|events\/|services\/(specs|endpoints)\/default\/kubernetes$|endpointslices\/default\/kubernetes)/;
    const { items } = await env.cp.store.list('/registry/');
    return new Map(items.filter((kv) => !background.test(kv.key)).map((kv) => [kv.key, kv.modRevision]));
  }

  /** Runs a failing request and checks that it wrote nothing to the store. */
  async function rejected(method: string, path: string, o: Parameters<KubectlEnv['api']>[2], code: number, reason: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const before = await snapshot();
    const body = assertStatus(await env.api(method, path, o), code, reason);
    assert.deepEqual(await snapshot(), before, 'a failed request wrote to the store');
    return body;
  }

  it('malformed JSON, YAML and protobuf → 400', async () => {
    await rejected('POST', PODS, { body: '{"apiVersion":"v1",', contentType: 'application/json' }, 400, 'BadRequest');
    await rejected('POST', PODS, { body: 'metadata: [unclosed', contentType: 'application/yaml' }, 400, 'BadRequest');
    await rejected('POST', PODS, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0xff, 0xff]), contentType: 'application/vnd.kubernetes.protobuf' }, 400, 'BadRequest');
    await rejected('POST', PODS, { body: Buffer.from('not protobuf'), contentType: 'application/vnd.kubernetes.protobuf' }, 400, 'BadRequest');
    await rejected('POST', PODS, { body: '[1,2]', contentType: 'application/json' }, 400, 'BadRequest');
  });

  it('a body over 3 MiB → 413', async () => {
    const big = pod('big', { metadata: { name: 'big', annotations: { x: 'a'.repeat(3 * 1024 * 1024) } } });
    await rejected('POST', PODS, { body: big, contentType: 'application/json' }, 413, 'RequestEntityTooLarge');
  });

  it('invalid names and specs → 422 Invalid with field causes', async () => {
    const bad = await rejected('POST', PODS, { body: pod('Bad_Name'), contentType: 'application/json' }, 422, 'Invalid');
    assert.ok(bad.details.causes.some((c: { field: string }) => c.field === 'metadata.name'));
    const noImage = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'noimage' }, spec: { containers: [{ name: 'c' }, { name: 'c', image: 'x' }] } });
    const r = await rejected('POST', PODS, { body: noImage, contentType: 'application/json' }, 422, 'Invalid');
    const fields = r.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('spec.containers[0].image'), fields.join());
    assert.ok(fields.includes('spec.containers[1].name'), fields.join());
    assert.match(r.message, /^Pod "noimage" is invalid: /);
    const ns = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'has.dots' } });
    await rejected('POST', '/api/v1/namespaces', { body: ns, contentType: 'application/json' }, 422, 'Invalid');
  });

  it('unknown kinds, versions and mismatched bodies', async () => {
    await rejected('GET', '/api/v1/namespaces/default/widgets', {}, 404, 'NotFound');
    await rejected('POST', '/apis/apps/v2/namespaces/default/deployments', { body: '{}', contentType: 'application/json' }, 404, 'NotFound');
    await rejected('GET', '/apis/example.com/v1', {}, 404, 'NotFound');
    const svc = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: {} });
    await rejected('POST', PODS, { body: svc, contentType: 'application/json' }, 400, 'BadRequest');
    const otherNs = pod('elsewhere', { metadata: { name: 'elsewhere', namespace: 'kube-system' } });
    await rejected('POST', PODS, { body: otherNs, contentType: 'application/json' }, 400, 'BadRequest');
    await rejected('POST', '/api/v1/namespaces/missing/pods', { body: pod('x'), contentType: 'application/json' }, 404, 'NotFound');
  });

  it('unknown fields: Strict (kubectl default) → 400, Warn → Warning header, Ignore → accepted', async () => {
    const typo = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typo', lables: { a: 'b' } }, dat: { a: 'b' } });
    const r = await rejected('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { body: typo, contentType: 'application/json' }, 400, 'BadRequest');
    assert.equal(r.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.lables", unknown field "dat"');
    const warned = await env.api('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', { body: typo, contentType: 'application/json' });
    assert.equal(warned.status, 201);
    assert.match(String(warned.headers.warning), /unknown field \\"dat\\"/);
    if (!kubectlUnavailableReason()) {
      const k = await env.newKubectl();
      const manifest = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: typo}\nsepc: {replicas: 1}\n';
      const applied = await k(['apply', '-f', '-'], { stdin: manifest });
      assert.notEqual(applied.code, 0);
      assert.match(applied.stderr, /strict decoding error: unknown field "sepc"/);
    }
  });

  it('wrong content types → 415', async () => {
    await rejected('POST', PODS, { body: pod('t'), contentType: 'text/plain' }, 415, 'UnsupportedMediaType');
    assert.equal((await env.api('POST', PODS, { body: pod('target'), contentType: 'application/json' })).status, 201);
    await rejected('PATCH', `${PODS}/target`, { body: '{"metadata":{"labels":{"a":"b"}}}', contentType: 'application/json' }, 415, 'UnsupportedMediaType');
    await rejected('PATCH', `${PODS}/target`, { body: '{"op":"add"}', contentType: 'application/json-patch+json' }, 400, 'BadRequest');
  });

  it('stale resourceVersion → 409 Conflict; duplicate create → 409 AlreadyExists', async () => {
    const created = await env.api('POST', PODS, { body: pod('versioned'), contentType: 'application/json' });
    const obj = created.json();
    const bumped = await env.api('PATCH', `${PODS}/versioned`, { body: '{"metadata":{"labels":{"v":"2"}}}', contentType: 'application/merge-patch+json' });
    assert.equal(bumped.status, 200);
    await rejected('PUT', `${PODS}/versioned`, { body: JSON.stringify(obj), contentType: 'application/json' }, 409, 'Conflict');
    const stalePatch = JSON.stringify({ metadata: { resourceVersion: obj.metadata.resourceVersion, labels: { v: '3' } } });
    await rejected('PATCH', `${PODS}/versioned`, { body: stalePatch, contentType: 'application/merge-patch+json' }, 409, 'Conflict');
    const dup = await rejected('POST', PODS, { body: pod('versioned'), contentType: 'application/json' }, 409, 'AlreadyExists');
    assert.equal(dup.message, 'pods "versioned" already exists');
  });

  it('bad or missing token → 401 (also for kubectl); list continue + resourceVersion → 400', async () => {
    await rejected('GET', PODS, { token: null }, 401, 'Unauthorized');
    await rejected('GET', PODS, { token: 'not-a-token' }, 401, 'Unauthorized');
    await rejected('GET', '/version', { token: 'abcdef.0123456789abcdef' }, 401, 'Unauthorized');
    assert.equal((await env.api('GET', '/healthz', { token: null })).status, 200);
    if (!kubectlUnavailableReason()) {
      // A kubeconfig with only the wrong token: the admin's holds a client certificate, which the
      // server would believe first, as kube-apiserver does.
      const k = await env.newKubectl({ token: 'wrong' });
      const r = await k(['get', 'pods']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /You must be logged in to the server/);
    }
    await rejected('GET', `${PODS}?limit=1&continue=abc&resourceVersion=5`, {}, 400, 'BadRequest');
    await rejected('GET', `${PODS}?limit=1&continue=not-a-token`, {}, 400, 'BadRequest');
    await rejected('GET', `${PODS}?fieldSelector=spec.bogus=1`, {}, 400, 'BadRequest');
  });
});
