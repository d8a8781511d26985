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
import { ApiClient, SECRETS, statusOf, type Secret } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
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

describe('encryption at rest: SQLite', () => {
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
});
