// The admin credential of `nodelet server` (staticAdminToken: false, as main.ts starts it): the
// admin.kubeconfig holds a client certificate of the cluster CA, so a second server that shares
// only the CA (and the service-account key: what a server join copies) accepts the first
// server's admin.kubeconfig. Before, it held a bearer token kept per data dir, which the second
// server refused with 401.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { X509Certificate } from 'node:crypto';
import { ApiClient, loadKubeconfig, SECRETS } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { parse } from 'yaml';
import { startControlPlane } from '../../src/control-plane.js';
import { cleanups, copyClusterSecrets } from '@nodelet/base/testing';

test('the first server\'s admin.kubeconfig is accepted by a second server sharing the CA', async (t) => {
  const cleanup = cleanups(t);
  const root = await mkdtemp(join(tmpdir(), 'nodelet-admin-cred-'));
  cleanup(() => rm(root, { recursive: true, force: true }));
  const [dirA, dirB] = [join(root, 'a'), join(root, 'b')];
  const start = (dataDir: string): ReturnType<typeof startControlPlane> =>
    startControlPlane({ dataDir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, staticAdminToken: false, logger: noopLogger });

  const a = await start(dirA);
  cleanup(() => a.close());
  // Server B: its own data dir and store, with the cluster CA and service-account key of A.
  await copyClusterSecrets(dirA, dirB);
  // A static admin token of an earlier version: removed at start (revoking the old kubeconfig).
  await writeFile(join(dirB, 'admin.token'), 'oldstatictoken\n', { mode: 0o600 });
  const b = await start(dirB);
  cleanup(() => b.close());

  assert.equal(a.adminToken, '');
  assert.ok(!existsSync(join(dirA, 'admin.token')), 'no static admin token is written');
  assert.ok(!existsSync(join(dirB, 'admin.token')), 'a leftover static admin token is removed');

  const raw = parse(await readFile(a.kubeconfigPath, 'utf8')) as { users: Array<{ user: Record<string, string> }> };
  assert.deepEqual(Object.keys(raw.users[0]!.user).sort(), ['client-certificate-data', 'client-key-data']);
  const cert = new X509Certificate(Buffer.from(raw.users[0]!.user['client-certificate-data']!, 'base64'));
  assert.equal(cert.subject, 'CN=kubernetes-admin\nO=system:masters');

  const cfg = await loadKubeconfig(a.kubeconfigPath);
  for (const [name, url] of [['A', a.url], ['B', b.url]] as const) {
    const client = new ApiClient({ ...cfg, server: url, servers: [] });
    try {
      // An admin-only read (kube-system Secrets) on each server.
      const list = await client.resource(SECRETS, 'kube-system').list();
      assert.ok(Array.isArray(list.items), `server ${name} serves the admin`);
    } finally {
      client.close();
    }
  }
});
