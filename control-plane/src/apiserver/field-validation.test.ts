// fieldValidation against the schemas, at every depth, over real HTTP (SQLite in a temp dir).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTempSqliteStore } from '../storage/testing/sqlite.js';
import type { Store } from '../storage/types.js';
import { createTokenAuthenticator } from './auth/authenticator.js';
import { createApiServer, type ApiServer } from './server.js';

const TOKEN = 'test-admin-token';
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('field validation with the API schemas', () => {
  let store: Store;
  let server: ApiServer;
  let base: string;
  const call = async (method: string, path: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; warning: string | null; json: any }> => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const r = await fetch(base + path, { method, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: r.status, warning: r.headers.get('warning'), json: await r.json() };
  };
  const deployment = (name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...container }] } }, ...spec },
  });

  before(async () => {
    store = createTempSqliteStore();
    server = await createApiServer({
      store,
      authenticator: createTokenAuthenticator({ staticTokens: new Map([[TOKEN, { name: 'admin', groups: ['system:masters'] }]]), getSecret: async () => undefined, now: Date.now }),
    });
    base = (await server.listen({ port: 0, host: '127.0.0.1' })).url;
  });
  after(async () => {
    await server?.close();
    await store?.close();
  });

  it('Strict refuses a nested unknown field with kube-apiserver’s message; nothing is stored', async () => {
    const r = await call('POST', `${DEPLOYS}?fieldValidation=Strict`, deployment('typo', { imagePullPolice: 'Always' }, { foo: 1 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.equal(r.json.message, 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolice", unknown field "spec.foo"');
    assert.equal((await fetch(`${base}${DEPLOYS}/typo`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 404);
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
});
