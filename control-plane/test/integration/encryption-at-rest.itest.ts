// Encryption at rest end to end, on each store: `nodelet server` processes (in-process, real
// sockets) started one after another on one data dir and datastore with different
// --encryption-provider-config files, Secrets written and read through the API, and the raw
// stored values read from the SQLite file / etcd directly.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { ApiClient, SECRETS, statusOf, type KubeObject, type ResourceType, type Secret } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { widgetCrd, WIDGET_GROUP } from '../../src/apiserver/apiextensions/testing/fixtures.js';
import { startControlPlane, type ControlPlane } from '../../src/control-plane.js';
import { createEtcdStore, createSqliteStore, type Store } from '../../src/storage/index.js';
import { etcdUnavailableReason, startTestEtcd, type TestEtcd } from '../../src/storage/testing/etcd.js';

const PASSWORD = `hunter2-${randomUUID()}`;
const key = (): string => randomBytes(32).toString('base64');

interface Backend {
  /** --datastore-endpoint for the servers (undefined: SQLite in the data dir). */
  endpoint?: string;
  /** The store as it is on disk / in etcd, without the servers' encryption. */
  raw(dir: string): Store;
  /** Bytes of the whole datastore that plaintext must not appear in (SQLite: the files). */
  everything?(dir: string): Promise<Buffer>;
}

function config(providers: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n${providers}`;
}
const aescbc = (...keys: Array<[string, string]>): string => `      - aescbc:\n          keys:\n${keys.map(([n, s]) => `            - {name: ${n}, secret: "${s}"}\n`).join('')}`;
const IDENTITY = '      - identity: {}\n';
const secretsIn = (c: ApiClient, ns = 'default') => c.resource(SECRETS, ns);

async function scenario(t: TestContext, backend: Backend): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-enc-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [key1, key2] = [key(), key()];
  let n = 0;
  /** Starts a server with this EncryptionConfiguration (none: no flag) and an admin client. */
  const server = async (providers?: string): Promise<{ cp: ControlPlane; secrets: ReturnType<typeof secretsIn>; client: ApiClient }> => {
    const file = join(dir, `enc-${n++}.yaml`);
    if (providers) await writeFile(file, config(providers), { mode: 0o600 });
    const cp = await startControlPlane({
      dataDir: dir, ...(backend.endpoint ? { datastoreEndpoint: backend.endpoint } : {}), ...(providers ? { encryptionProviderConfig: file } : {}),
      bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, leaderElect: false, logger: noopLogger,
    });
    const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
    return { cp, client, secrets: secretsIn(client) };
  };
  const stop = async (s: { cp: ControlPlane; client: ApiClient }): Promise<void> => {
    s.client.close();
    await s.cp.close();
  };
  const raw = async (name: string): Promise<string> => {
    const store = backend.raw(dir);
    try {
      const kv = await store.get(`/registry/secrets/default/${name}`);
      assert.ok(kv, `${name} is stored`);
      return Buffer.from(kv.value).toString('latin1');
    } finally {
      await store.close();
    }
  };
  const secret = (name: string): Secret => ({ metadata: { name, namespace: 'default' }, stringData: { password: PASSWORD } }) as Secret;
  const password = (s: Secret): string => Buffer.from(s.data!.password!, 'base64').toString();

  // 1. Before encryption: a plaintext Secret.
  let s = await server();
  await s.secrets.create(secret('before'));
  await stop(s);
  assert.ok((await raw('before')).includes('"kind":"Secret"'));

  // 2. aescbc key1 first, identity last: new Secrets are encrypted, the old one still reads; a
  //    watch sees decrypted objects.
  s = await server(aescbc(['key1', key1]) + IDENTITY);
  assert.equal(password(await s.secrets.get('before')), PASSWORD);
  const listed = await s.secrets.list();
  const stopWatch = new AbortController();
  const watched = (async () => {
    for await (const e of s.secrets.watch({ resourceVersion: listed.metadata!.resourceVersion!, signal: stopWatch.signal, timeoutSeconds: 30 })) {
      if (e.type === 'ADDED' && e.object.metadata?.name === 'after') return password(e.object);
    }
    return undefined;
  })();
  await s.secrets.create(secret('after'));
  assert.equal(await watched, PASSWORD);
  stopWatch.abort();
  assert.equal(password(await s.secrets.get('after')), PASSWORD);
  await stop(s);
  const stored = await raw('after');
  assert.ok(stored.startsWith('k8s:enc:aescbc:v1:key1:'), stored.slice(0, 40));
  assert.ok(!stored.includes(PASSWORD) && !stored.includes(Buffer.from(PASSWORD).toString('base64')), 'no plaintext in the stored value');
  if (backend.everything) {
    // Only 'before' (written in plaintext in step 1) may show the password anywhere in the files.
    const all = (await backend.everything(dir)).toString('latin1');
    assert.ok(!all.includes('"name":"after"'), 'the encrypted Secret\'s JSON is nowhere in the database files');
  }

  // 3. A server with only identity reads plaintext Secrets, and answers 500 for an encrypted one.
  s = await server(IDENTITY);
  assert.equal(password(await s.secrets.get('before')), PASSWORD);
  await assert.rejects(s.secrets.get('after'), (err: unknown) => {
    const st = statusOf(err);
    assert.equal(st?.code, 500);
    assert.equal(st?.reason, 'InternalError');
    assert.equal(st?.message, 'Internal error occurred: unable to transform key "/registry/secrets/default/after": no matching prefix found');
    return true;
  });
  await stop(s);

  // 4. Rotation: key2 first, key1 still readable; rewriting every Secret (kubectl get -o json |
  //    kubectl replace -f -) moves them all to key2.
  s = await server(aescbc(['key2', key2], ['key1', key1]) + IDENTITY);
  for (const item of (await s.client.resource(SECRETS).list()).items) await s.client.resource(SECRETS).update(item);
  await stop(s);
  for (const name of ['before', 'after']) assert.ok((await raw(name)).startsWith('k8s:enc:aescbc:v1:key2:'), name);

  // 5. key1 gone: everything still reads (all on key2); a server with neither key names the failure.
  s = await server(aescbc(['key2', key2]));
  assert.equal(password(await s.secrets.get('before')), PASSWORD);
  assert.equal(password(await s.secrets.get('after')), PASSWORD);
  await stop(s);
  s = await server(aescbc(['key3', key()]));
  await assert.rejects(s.secrets.get('after'), (err: unknown) => {
    assert.equal(statusOf(err)?.message, 'Internal error occurred: unable to transform key "/registry/secrets/default/after": no matching key was found for the provided AES transformer');
    return true;
  });
  // The server itself is unharmed: other resources and other requests go on.
  assert.ok((await s.client.resource(SECRETS, 'kube-system').list()).items);
  await stop(s);
}

const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', singular: 'customresourcedefinition', namespaced: false };
const WIDGETS: ResourceType<KubeObject & { spec?: { image?: string } }> = { group: WIDGET_GROUP, version: 'v1', kind: 'Widget', plural: 'widgets', singular: 'widget', namespaced: true };

/**
 * Custom resources: a `*.*` rule encrypts a CRD's objects (created after the server started); a
 * config naming the custom resource (`widgets.<group>`) is accepted at start and its provider used.
 */
async function customScenario(t: TestContext, backend: Backend): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-enc-crd-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [key1, boxKey] = [key(), key()];
  const image = `busybox:${randomUUID().replace(/-/g, '')}`;
  let n = 0;
  const server = async (entries: string): Promise<{ cp: ControlPlane; client: ApiClient }> => {
    const file = join(dir, `enc-${n++}.yaml`);
    await writeFile(file, `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n${entries}`, { mode: 0o600 });
    const cp = await startControlPlane({
      dataDir: dir, ...(backend.endpoint ? { datastoreEndpoint: backend.endpoint } : {}), encryptionProviderConfig: file,
      bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, leaderElect: false, logger: noopLogger,
    });
    return { cp, client: new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem }) };
  };
  const stop = async (s: { cp: ControlPlane; client: ApiClient }): Promise<void> => {
    s.client.close();
    await s.cp.close();
  };
  const raw = async (name: string): Promise<string> => {
    const store = backend.raw(dir);
    try {
      const kv = await store.get(`/registry/${WIDGET_GROUP}/widgets/default/${name}`);
      assert.ok(kv, `${name} is stored`);
      return Buffer.from(kv.value).toString('latin1');
    } finally {
      await store.close();
    }
  };
  const widget = (name: string): KubeObject => ({ apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { image } }) as KubeObject;

  // 1. `*.*` with aescbc: the CRD comes after the server started; its object is encrypted.
  let s = await server(`  - resources: ["*.*"]\n    providers:\n${aescbc(['key1', key1])}${IDENTITY}`);
  await s.client.create(CRDS, widgetCrd() as unknown as KubeObject);
  await pollUntil('widgets served', async () => (await s.client.resource(WIDGETS, 'default').create(widget('w1')).then(() => true, () => false)), { timeoutMs: 15_000 });
  assert.equal((await s.client.resource(WIDGETS, 'default').get('w1')).spec?.image, image);
  await stop(s);
  const w1 = await raw('w1');
  assert.ok(w1.startsWith('k8s:enc:aescbc:v1:key1:'), w1.slice(0, 40));
  assert.ok(!w1.includes(image) && !w1.includes('"kind":"Widget"'), 'no plaintext in the stored value');

  // 2. A config naming the custom resource is accepted and its entry, first, wins over `*.*`: the
  //    old value still reads (aescbc second), a new one takes secretbox.
  s = await server(
    `  - resources: [widgets.${WIDGET_GROUP}]\n    providers:\n      - secretbox:\n          keys:\n            - {name: box, secret: "${boxKey}"}\n${aescbc(['key1', key1])}` +
      `  - resources: ["*.*"]\n    providers:\n${aescbc(['key1', key1])}${IDENTITY}`,
  );
  await pollUntil('widgets served', async () => s.client.resource(WIDGETS, 'default').get('w1').then((w) => w.spec?.image === image, () => false), { timeoutMs: 15_000 });
  await s.client.resource(WIDGETS, 'default').create(widget('w2'));
  await stop(s);
  assert.ok((await raw('w2')).startsWith('k8s:enc:secretbox:v1:box:'));
}

describe('encryption at rest: SQLite', () => {
  it('encrypts custom resources by *.* and by their own name', async (t) => {
    await customScenario(t, { raw: (dir) => createSqliteStore({ path: join(dir, 'state.db') }) });
  });

  it('encrypts Secrets in the SQLite file, reads them back, rotates keys by rewriting', async (t) => {
    await scenario(t, {
      raw: (dir) => createSqliteStore({ path: join(dir, 'state.db') }),
      everything: async (dir) => Buffer.concat(await Promise.all(['state.db', 'state.db-wal'].map((f) => readFile(join(dir, f)).catch(() => Buffer.alloc(0))))),
    });
  });
});

const skip = etcdUnavailableReason() ?? false;
describe('encryption at rest: etcd', { skip }, () => {
  let etcd: TestEtcd | undefined;
  before(async () => {
    etcd = await startTestEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });

  it('encrypts Secrets in etcd, reads them back, rotates keys by rewriting', async (t) => {
    await scenario(t, {
      endpoint: `etcd://${new URL(etcd!.endpoint).host}`,
      raw: () => createEtcdStore({ endpoints: [etcd!.endpoint] }),
    });
  });

  // After the Secrets scenario: its identity-only server could not read objects this one encrypts by `*.*`.
  it('encrypts custom resources by *.* and by their own name', async (t) => {
    await customScenario(t, { endpoint: `etcd://${new URL(etcd!.endpoint).host}`, raw: () => createEtcdStore({ endpoints: [etcd!.endpoint] }) });
  });
});
