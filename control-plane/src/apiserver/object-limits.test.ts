// What one client can make the server hold or compute, over real HTTP on port 0: JSON patch
// bombs, objects past the ConfigMap/Secret and etcd size limits, and bodies nested past what the
// server can clone and encode (docs/security.md, "Request and object bounds").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Authenticator } from './auth/types.js';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

const authenticator: Authenticator = { authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }) };
const NS = '/api/v1/namespaces/default';

interface Reply {
  status: number;
  body: { kind?: string; reason?: string; message?: string; code?: number; details?: { causes?: Array<{ field?: string; message?: string }> } };
}

describe('request and object bounds', () => {
  let srv: TestApiServer;
  let url: string;
  before(async () => {
    srv = await startTestApiServer({ authenticator });
    ({ url } = srv);
  });
  after(() => srv?.close());

  const send = async (method: string, path: string, body: unknown, contentType = 'application/json'): Promise<Reply> => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: 'Bearer x', 'Content-Type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Reply['body'] };
  };
  const configMap = (name: string, data: Record<string, string>): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

  it('a JSON patch whose copies add up past 3 MiB is 422, and one of more than 10,000 operations 413', async () => {
    assert.equal((await send('POST', `${NS}/configmaps`, configMap('bomb', { a: 'x'.repeat(100 * 1024) }))).status, 201);
    // The report's shape: one 100 KiB string, then 40 copies of it (4 MiB added by a 3 KiB body).
    const copies = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data/a', path: `/data/c${i}` }));
    const bomb = await send('PATCH', `${NS}/configmaps/bomb`, copies, 'application/json-patch+json');
    assert.equal(bomb.status, 422, JSON.stringify(bomb.body));
    assert.match(bomb.body.message ?? '', /accumulated size increase of copy is \d+, exceeding the limit 3145728/);
    // Copying a map into itself doubles it each time (2^40 × 100 KiB): refused once the copies pass the bound.
    const doubling = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/x${i}` }));
    assert.equal((await send('PATCH', `${NS}/configmaps/bomb`, doubling, 'application/json-patch+json')).status, 422);
    const many = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'bomb' }));
    const tooMany = await send('PATCH', `${NS}/configmaps/bomb`, many, 'application/json-patch+json');
    assert.deepEqual([tooMany.status, tooMany.body.reason, tooMany.body.message], [413, 'RequestEntityTooLarge', 'The allowed maximum operations in a JSON patch is 10000, got 10001']);
    // Small copies still apply.
    const ok = await send('PATCH', `${NS}/configmaps/bomb`, [{ op: 'copy', from: '/metadata/name', path: '/data/name' }], 'application/json-patch+json');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('ConfigMap and Secret data past 1 MiB is 422 Too long', async () => {
    const cm = await send('POST', `${NS}/configmaps`, configMap('big', { a: 'x'.repeat(600 * 1024), b: 'y'.repeat(600 * 1024) }));
    assert.equal(cm.status, 422, JSON.stringify(cm.body).slice(0, 300));
    assert.deepEqual(cm.body.details?.causes, [{ reason: 'FieldValueTooLong', field: '', message: 'Too long: must have at most 1048576 bytes' }]);
    const binary = await send('POST', `${NS}/configmaps`, { ...(configMap('bin', { a: 'x'.repeat(512 * 1024) }) as object), binaryData: { b: Buffer.alloc(600 * 1024).toString('base64') } });
    assert.equal(binary.status, 422);
    // A Secret counts decoded bytes: 1 MiB exactly is allowed, one more byte is not.
    const secret = (name: string, bytes: number): unknown => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { k: Buffer.alloc(bytes, 1).toString('base64') } });
    assert.equal((await send('POST', `${NS}/secrets`, secret('at-limit', 1024 * 1024))).status, 201);
    const over = await send('POST', `${NS}/secrets`, secret('over', 1024 * 1024 + 1));
    assert.equal(over.status, 422);
    assert.deepEqual(over.body.details?.causes?.map((c) => c.field), ['data']);
    // Growing one past the limit by a patch is refused the same way.
    const grown = await send('PATCH', `${NS}/configmaps/bomb`, { data: { more: 'z'.repeat(1024 * 1024) } }, 'application/merge-patch+json');
    assert.equal(grown.status, 422);
  });

  it('an object whose stored form passes etcd’s 1.5 MiB request limit is 413, on create and on update', async () => {
    const containers = Array.from({ length: 10_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox:1' }));
    const pod = await send('POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'wide' }, spec: { containers } });
    assert.deepEqual([pod.status, pod.body.reason, pod.body.message], [413, 'RequestEntityTooLarge', 'etcdserver: request is too large']);
    const deployment = (cs: unknown[]): unknown => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'wide' },
      spec: { selector: { matchLabels: { app: 'w' } }, template: { metadata: { labels: { app: 'w' } }, spec: { containers: cs } } },
    });
    assert.equal((await send('POST', '/apis/apps/v1/namespaces/default/deployments', deployment(containers.slice(0, 1)))).status, 201);
    const grown = await send('PATCH', '/apis/apps/v1/namespaces/default/deployments/wide', deployment(containers), 'application/merge-patch+json');
    assert.deepEqual([grown.status, grown.body.reason], [413, 'RequestEntityTooLarge']);
    assert.equal(((await (await fetch(`${url}/apis/apps/v1/namespaces/default/deployments/wide`, { headers: { Authorization: 'Bearer x' } })).json()) as { spec: { template: { spec: { containers: unknown[] } } } }).spec.template.spec.containers.length, 1);
  });

  it('bodies nested deeper than the server can clone and encode are 400, in JSON, YAML and patches', async () => {
    const deep = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    for (const levels of [2_000, 5_000, 9_000]) {
      const json = await send('POST', `${NS}/configmaps`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":${deep(levels)}}}`);
      assert.equal(json.status, 400, `JSON ${levels} levels: ${JSON.stringify(json.body).slice(0, 200)}`);
      const yaml = await send('POST', `${NS}/configmaps`, `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${deep(levels)}\n`, 'application/yaml');
      assert.equal(yaml.status, 400, `YAML ${levels} levels: ${JSON.stringify(yaml.body).slice(0, 200)}`);
      const patch = await send('PATCH', `${NS}/configmaps/bomb`, `{"metadata":{"annotations":${deep(levels)}}}`, 'application/merge-patch+json');
      assert.equal(patch.status, 400, `merge patch ${levels} levels`);
    }
  });
});
