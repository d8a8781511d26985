import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { ensureToken, renderKubeconfig, writeKubeconfig } from './kubeconfig.js';
import { ensurePki } from './pki.js';

test('ensurePki creates a CA-signed serving cert with the SANs, keys 0600, and reuses it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pki = await ensurePki({ dir, extraIps: ['192.0.2.10'], extraDnsNames: ['api.lab'] });
  const ca = new X509Certificate(pki.caPem);
  const serving = new X509Certificate(pki.serving.certPem);
  assert.ok(ca.ca);
  assert.ok(serving.verify(ca.publicKey));
  assert.equal(serving.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(serving.checkIP('192.0.2.10'), '192.0.2.10');
  assert.equal(serving.checkHost('localhost'), 'localhost');
  assert.equal(serving.checkHost('api.lab'), 'api.lab');
  assert.ok(new X509Certificate(pki.agentClient.certPem).verify(ca.publicKey));
  for (const f of ['ca.key', 'apiserver.key', 'apiserver-kubelet-client.key']) assert.equal((await stat(join(dir, f))).mode & 0o777, 0o600, f);
  const again = await ensurePki({ dir, extraIps: ['192.0.2.10'], extraDnsNames: ['api.lab'] });
  assert.equal(again.serving.certPem, pki.serving.certPem, 'serving cert re-issued without need');
  const widened = await ensurePki({ dir, extraIps: ['192.0.2.11'] });
  assert.notEqual(widened.serving.certPem, pki.serving.certPem);
  assert.equal(widened.caPem, pki.caPem, 'the CA must survive a re-issue');
  assert.ok(new X509Certificate(widened.serving.certPem).verify(ca.publicKey));
});

test('admin token and kubeconfig are 0600 and stable', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-kc-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const token = await ensureToken(join(dir, 'admin.token'));
  assert.match(token, /^[a-z0-9]{64}$/);
  assert.equal(await ensureToken(join(dir, 'admin.token')), token);
  assert.equal((await stat(join(dir, 'admin.token'))).mode & 0o777, 0o600);
  await writeKubeconfig(join(dir, 'admin.kubeconfig'), renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: 'PEM', token }));
  assert.equal((await stat(join(dir, 'admin.kubeconfig'))).mode & 0o777, 0o600);
  const kc = YAML.parse(await readFile(join(dir, 'admin.kubeconfig'), 'utf8'));
  assert.equal(kc.clusters[0].cluster['certificate-authority-data'], Buffer.from('PEM').toString('base64'));
  assert.equal(kc.users[0].user.token, token);
  assert.equal(kc['current-context'], 'admin@nodelet');
});
