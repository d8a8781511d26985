// `nodelet token create --server-join` + `nodelet install server --join` against a real
// `nodelet server` (in-process, HTTPS on 127.0.0.1:0): the joining side pins the CA, fetches the
// shared secrets (CA and its key, service-account key, etcd client files, datastore endpoint)
// with a server join token, and writes them 0600 with the flags that use them. Only a server
// join token opens the bundle, and it opens nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createCa, createSqliteStore, startControlPlane } from '@nodelet/control-plane';
import { ApiClient, NAMESPACES, SERVER_JOIN_PATH } from '@nodelet/api';
import { errCode } from '@nodelet/base';
import { createToken } from '../../src/commands/ops/token.js';
import { createServerJoinToken, fetchServerJoinBundle, serverJoinFiles } from '../../src/commands/ops/server-join.js';
import { installServer } from '../../src/commands/ops/install.js';
import { cleanups } from '@nodelet/base/testing';

test('server join: token, CA pinning, bundle, files and every refusal', async (t) => {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-server-join-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  // The first server "is on etcd" (the endpoint is only handed out: this test's store is SQLite).
  const etcdCa = (await createCa('test-etcd-ca')).certPem;
  const etcdFiles = { caFile: join(dir, 'etcd-ca.crt'), certFile: join(dir, 'etcd-client.crt'), keyFile: join(dir, 'etcd-client.key') };
  writeFileSync(etcdFiles.caFile, etcdCa);
  writeFileSync(etcdFiles.certFile, 'client certificate\n');
  writeFileSync(etcdFiles.keyFile, 'client key\n', { mode: 0o600 });
  const store = createSqliteStore({ path: join(dir, 'state.db') });
  cleanup(() => store.close());
  const serverDir = join(dir, 'server');
  const cp = await startControlPlane({
    dataDir: serverDir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, metrics: false,
    store, datastoreEndpoint: 'etcd://10.0.0.1:2379,10.0.0.2:2379', etcdTls: etcdFiles,
  });
  cleanup(() => cp.close());
  const admin = cp.kubeconfigPath;

  const tok = await createServerJoinToken({ kubeconfig: admin, ttlMs: 3_600_000 });
  assert.match(tok.token, /^[a-z0-9]{6}\.[a-z0-9]{32}$/);
  assert.match(tok.joinCommand, /^nodelet install server --join https:\/\/127\.0\.0\.1:\d+ --token [a-z0-9.]+ --ca-cert-hash sha256:[0-9a-f]{64}$/);

  await t.test('the bundle holds the shared secrets, written 0600 with the flags that use them', async () => {
    const bundle = await fetchServerJoinBundle({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash });
    const pki = (f: string): string => readFileSync(join(serverDir, 'pki', f), 'utf8');
    assert.equal(bundle.caCert, pki('ca.crt'));
    assert.equal(bundle.caKey, pki('ca.key'));
    assert.equal(bundle.serviceAccountKey, pki('sa.key'));
    assert.equal(bundle.datastoreEndpoint, 'etcd://10.0.0.1:2379,10.0.0.2:2379');
    assert.deepEqual(bundle.etcd, { ca: etcdCa, cert: 'client certificate\n', key: 'client key\n' });

    const root = join(dir, 'root');
    const files = serverJoinFiles('/var/lib/nodelet/server', bundle);
    assert.deepEqual(files.args, [
      '--datastore-endpoint', 'etcd://10.0.0.1:2379,10.0.0.2:2379',
      '--etcd-cafile', '/var/lib/nodelet/server/etcd/ca.crt', '--etcd-certfile', '/var/lib/nodelet/server/etcd/client.crt', '--etcd-keyfile', '/var/lib/nodelet/server/etcd/client.key',
    ]);
    installServer({ root, noStart: true, sourceDir: dir, join: files });
    for (const f of ['pki/ca.crt', 'pki/ca.key', 'pki/sa.key', 'etcd/ca.crt', 'etcd/client.crt', 'etcd/client.key']) {
      assert.equal(statSync(join(root, 'var/lib/nodelet/server', f)).mode & 0o777, 0o600, f);
    }
    assert.equal(readFileSync(join(root, 'var/lib/nodelet/server/pki/ca.key'), 'utf8'), bundle.caKey);
    assert.match(readFileSync(join(root, 'etc/nodelet/server.env'), 'utf8'), /--datastore-endpoint etcd:\/\/10\.0\.0\.1:2379,10\.0\.0\.2:2379 --etcd-cafile/);
    // Idempotent; a machine of another cluster keeps its CA.
    assert.ok(installServer({ root, noStart: true, sourceDir: dir, join: files }).files.every((f) => f.outcome === 'unchanged'));
    const other = { ...files, files: files.files.map((f) => (f.path.endsWith('ca.key') ? { ...f, content: 'another key' } : f)) };
    assert.throws(() => installServer({ root, noStart: true, sourceDir: dir, join: other }), (e) => errCode(e) === 'ERR_FAILED_PRECONDITION' && /belongs to another cluster/.test(String(e)));
  });

  await t.test('a wrong CA pin aborts before the token is sent', async () => {
    const wrong = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(fetchServerJoinBundle({ server: tok.server, token: tok.token, caCertHash: wrong }), (e) => errCode(e) === 'ERR_PERMISSION_DENIED' && /refusing to send the token/.test(String(e)));
  });

  await t.test('only a valid server join token opens the bundle, and it opens nothing else', async () => {
    const forged = `${tok.token.slice(0, 7)}${'x'.repeat(32)}`;
    await assert.rejects(fetchServerJoinBundle({ server: tok.server, token: forged, caCertHash: tok.caCertHash }), (e) => errCode(e) === 'ERR_UNAUTHENTICATED');
    const expired = await createServerJoinToken({ kubeconfig: admin, ttlMs: 1000, now: Date.now() - 60_000 });
    await assert.rejects(fetchServerJoinBundle({ server: tok.server, token: expired.token, caCertHash: tok.caCertHash }), (e) => errCode(e) === 'ERR_UNAUTHENTICATED');
    const node = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    await assert.rejects(fetchServerJoinBundle({ server: tok.server, token: node.token, caCertHash: tok.caCertHash }), (e) => errCode(e) === 'ERR_INVALID_ARGUMENT');
    // Neither the admin nor a node bootstrap token gets the bundle.
    for (const token of [cp.adminToken, node.token]) {
      const c = new ApiClient({ server: cp.url, ca: cp.caPem, token });
      await assert.rejects(c.getRaw(SERVER_JOIN_PATH), (e) => errCode(e) === 'ERR_UNAUTHENTICATED');
      c.close();
    }
    // The server join token is no API credential.
    const asJoin = new ApiClient({ server: cp.url, ca: cp.caPem, token: tok.token });
    await assert.rejects(asJoin.list(NAMESPACES), (e) => errCode(e) === 'ERR_UNAUTHENTICATED');
    asJoin.close();
  });

  await t.test('a server on SQLite has no bundle to give', async () => {
    const sqlite = await startControlPlane({ dataDir: join(dir, 'sqlite'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, metrics: false });
    cleanup(() => sqlite.close());
    const s = await createServerJoinToken({ kubeconfig: sqlite.kubeconfigPath, ttlMs: 3_600_000 });
    await assert.rejects(fetchServerJoinBundle({ server: s.server, token: s.token, caCertHash: s.caCertHash }), (e) => errCode(e) === 'ERR_NOT_FOUND' && /SQLite/.test(String(e)));
  });
});
