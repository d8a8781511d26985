// fieldValidation against the schemas, at every depth, over real HTTP (SQLite in a temp dir).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer, type TestReply } from './testing/test-server.js';

const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('field validation with the API schemas', () => {
  let srv: TestApiServer;
  const call = async (method: string, path: string, body: unknown, contentType?: string): Promise<TestReply & { warning: string | null }> => {
    const r = await srv.call(method, path, body, { contentType });
    return { ...r, warning: r.headers.get('warning') };
  };
  const deployment = (name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...container }] } }, ...spec },
  });

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('Strict refuses a nested unknown field with kube-apiserver’s message; nothing is stored', async () => {
    const r = await call('POST', `${DEPLOYS}?fieldValidation=Strict`, deployment('typo', { imagePullPolice: 'Always' }, { foo: 1 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.equal(r.json.message, 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolice", unknown field "spec.foo"');
    assert.equal((await fetch(`${srv.url}${DEPLOYS}/typo`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 404);
  });

  it('Warn stores the object and names each unknown field in a Warning header; Ignore says nothing', async () => {
    const warned = await call('POST', `${DEPLOYS}?fieldValidation=Warn`, deployment('warned', { imagePullPolice: 'Always' }));
    assert.equal(warned.status, 201);
    assert.equal(warned.warning, '299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolice\\""');
    const ignored = await call('POST', `${DEPLOYS}?fieldValidation=Ignore`, deployment('ignored', { imagePullPolice: 'Always' }));
    assert.equal(ignored.status, 201);
    assert.equal(ignored.warning, null);
  });

  it('a valid object with every kind of map, list and quantity passes Strict', async () => {
    const full = deployment('full', {
      ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
      env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      resources: { limits: { cpu: '1', memory: '64Mi' }, requests: { cpu: 0.5 } },
      readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
      volumeMounts: [{ name: 'v', mountPath: '/v' }],
      securityContext: { runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
    }, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } }, replicas: 2 });
    full.metadata = { name: 'full', labels: { 'example.com/any': 'x' }, annotations: { note: 'y' } } as never;
    (full.spec.template.spec as Record<string, unknown>).volumes = [{ name: 'v', emptyDir: { sizeLimit: '1Gi' } }];
    (full.spec.template.spec as Record<string, unknown>).tolerations = [{ operator: 'Exists' }];
    const r = await call('POST', `${DEPLOYS}?fieldValidation=Strict`, full);
    assert.equal(r.status, 201, JSON.stringify(r.json));
  });

  it('patches: directives and deletions pass, a typo does not; apply names the field in its own form', async () => {
    const smp = { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'c' }], containers: [{ name: 'c', image: 'busybox:1.37' }] } }, revisionHistoryLimit: null } };
    assert.equal((await call('PATCH', `${DEPLOYS}/full?fieldValidation=Strict`, smp, 'application/strategic-merge-patch+json')).status, 200);
    const typo = await call('PATCH', `${DEPLOYS}/full?fieldValidation=Strict`, { spec: { replicaz: 3 } }, 'application/merge-patch+json');
    assert.equal(typo.status, 400);
    assert.equal(typo.json.message, 'strict decoding error: unknown field "spec.replicaz"');
    const applied = await call('PATCH', `${DEPLOYS}/full?fieldManager=me`, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: full}\nspec: {replicaz: 3}\n', 'application/apply-patch+yaml');
    assert.equal(applied.status, 400);
    assert.equal(applied.json.message, 'failed to create typed patch object (default/full; apps/v1, Kind=Deployment): .spec.replicaz: field not declared in schema');
  });

  it('the status subresource is checked against the same kind', async () => {
    const current = (await call('GET', `${DEPLOYS}/full`, undefined as never)).json;
    const r = await call('PUT', `${DEPLOYS}/full/status?fieldValidation=Strict`, { ...current, status: { replicas: 2, readyReplica: 1 } });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /unknown field "status\.readyReplica"/);
  });
  it('unknown fields are never stored: Warn and Ignore drop them on create, update and every patch type', async () => {
    const svcs = '/api/v1/namespaces/default/services';
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'odd', bogus: 1 }, spec: { ports: [{ port: 80, portz: 1 }], extra: true } };
    const created = await call('POST', `${svcs}?fieldValidation=Warn`, svc);
    assert.equal(created.status, 201);
    assert.equal(created.warning, '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"spec.ports[0].portz\\"", 299 - "unknown field \\"spec.extra\\""');
    const stored = (await call('GET', `${svcs}/odd`, undefined)).json;
    assert.equal(stored.metadata.bogus, undefined);
    assert.equal(stored.spec.extra, undefined);
    assert.equal(stored.spec.ports[0].portz, undefined);
    // A stored unknown field made every protobuf list/watch of the kind fail; the list is protobuf now.
    const pb = await fetch(`${srv.url}${svcs}`, { headers: { Authorization: `Bearer ${TOKEN}`, Accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(pb.status, 200);
    assert.equal(pb.headers.get('content-type'), 'application/vnd.kubernetes.protobuf');
    await pb.arrayBuffer();
    const ignored = await call('PUT', `${svcs}/odd?fieldValidation=Ignore`, { ...stored, spec: { ...stored.spec, extra: 1 } });
    assert.equal(ignored.status, 200);
    assert.equal(ignored.warning, null);
    assert.equal(ignored.json.spec.extra, undefined);
    for (const [type, body] of [
      ['application/merge-patch+json', { spec: { extra: 2 } }],
      ['application/strategic-merge-patch+json', { spec: { extra: 3 } }],
      ['application/json-patch+json', [{ op: 'add', path: '/spec/extra', value: 4 }]],
    ] as const) {
      const r = await call('PATCH', `${svcs}/odd`, body, type);
      assert.equal(r.status, 200, type);
      assert.equal(r.warning, '299 - "unknown field \\"spec.extra\\""', type);
      assert.equal(r.json.spec.extra, undefined, type);
    }
    assert.equal((await call('GET', `${svcs}/odd`, undefined)).json.spec.extra, undefined);
    const strict = await call('PATCH', `${svcs}/odd?fieldValidation=Strict`, [{ op: 'add', path: '/spec/extra', value: 5 }], 'application/json-patch+json');
    assert.equal(strict.status, 400);
    assert.equal(strict.json.message, 'strict decoding error: unknown field "spec.extra"');
  });

  it('a patch cannot change kind or apiVersion; apply may not carry managedFields', async () => {
    for (const [type, body] of [
      ['application/json-patch+json', [{ op: 'replace', path: '/kind', value: 'Secret' }]],
      ['application/json-patch+json', [{ op: 'replace', path: '/apiVersion', value: 'apps/v2' }]],
      ['application/merge-patch+json', { kind: 'ReplicaSet' }],
    ] as const) {
      const r = await call('PATCH', `${DEPLOYS}/full`, body, type);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.json.message, /a patch cannot change them/);
    }
    const got = (await call('GET', `${DEPLOYS}/full`, undefined)).json;
    assert.equal(got.kind, 'Deployment');
    assert.equal(got.apiVersion, 'apps/v1');
    const applied = await call('PATCH', `${DEPLOYS}/full?fieldManager=me`, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: full, managedFields: [{manager: x}]}\n', 'application/apply-patch+yaml');
    assert.equal(applied.status, 400);
    assert.equal(applied.json.message, 'metadata.managedFields must be nil');
  });

  it('Secret data and ConfigMap binaryData must be base64, as decoding them upstream requires', async () => {
    const secret = await call('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'not base64!' } });
    assert.equal(secret.status, 400);
    assert.equal(secret.json.message, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3');
    const cms = '/api/v1/namespaces/default/configmaps';
    const short = await call('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, binaryData: { k: 'abc' } });
    assert.equal(short.status, 400);
    assert.equal(short.json.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0');
    assert.equal((await call('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, binaryData: { k: 'aGk=' } })).status, 201);
    const patched = await call('PATCH', `${cms}/b`, { binaryData: { k: 'aGk=x' } }, 'application/merge-patch+json');
    assert.equal(patched.status, 422);
    assert.equal((await call('GET', `${cms}/b`, undefined)).json.binaryData.k, 'aGk=');
  });
});
