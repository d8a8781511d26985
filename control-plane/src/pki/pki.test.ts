import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { createCa, describeCertificate, issueCertificate, loadCa } from './certs.js';
import { writeKubeconfig } from '@nodelet/api';
import { adminKubeconfig, ensureToken } from './kubeconfig.js';
import { loadPair, writePairAtomic } from './pair-files.js';
import { AGENT_CLIENT_USER, ensurePki } from './pki.js';

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
  await writeKubeconfig(join(dir, 'admin.kubeconfig'), adminKubeconfig('https://127.0.0.1:6443', 'PEM', { certPem: 'CERT', keyPem: 'KEY' }));
  assert.equal((await stat(join(dir, 'admin.kubeconfig'))).mode & 0o777, 0o600);
  const kc = YAML.parse(await readFile(join(dir, 'admin.kubeconfig'), 'utf8'));
  assert.equal(kc.clusters[0].cluster['certificate-authority-data'], Buffer.from('PEM').toString('base64'));
  assert.equal(kc.users[0].user['client-key-data'], Buffer.from('KEY').toString('base64'));
  assert.equal(kc['current-context'], 'admin@nodelet');
});

const DAY = 24 * 3600 * 1000;
const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber;

test('writePairAtomic: key 0600 and cert 0644 whatever the umask, no temp files left, loadPair reads it back', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pair-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await loadCa(await createCa('t'));
  const a = await issueCertificate(ca, { commonName: 'a', usage: 'client' });
  const old = process.umask(0o077);
  try {
    await writePairAtomic(dir, 'x', a);
  } finally {
    process.umask(old);
  }
  assert.equal((await stat(join(dir, 'x.key'))).mode & 0o777, 0o600);
  assert.equal((await stat(join(dir, 'x.crt'))).mode & 0o777, 0o644);
  assert.deepEqual(await readdir(dir), ['x.crt', 'x.key']);
  assert.deepEqual(await loadPair(dir, 'x'), { status: 'ok', pair: a });
  assert.deepEqual(await loadPair(dir, 'y'), { status: 'missing' });
  // A crash before the renames leaves temp files; the next write of that pair removes them.
  await writeFile(join(dir, '.x.key.tmp-dead'), 'half');
  await writeFile(join(dir, '.x.crt.tmp-dead'), 'half');
  const b = await issueCertificate(ca, { commonName: 'b', usage: 'client' });
  await writePairAtomic(dir, 'x', b);
  assert.deepEqual(await readdir(dir), ['x.crt', 'x.key']);
  assert.deepEqual(await loadPair(dir, 'x'), { status: 'ok', pair: b });
});

test('loadPair reports a key that is not the certificate\'s', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pair-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await loadCa(await createCa('t'));
  const a = await issueCertificate(ca, { commonName: 'a', usage: 'client' });
  const b = await issueCertificate(ca, { commonName: 'b', usage: 'client' });
  await writeFile(join(dir, 'x.crt'), a.certPem);
  await writeFile(join(dir, 'x.key'), b.keyPem);
  const loaded = await loadPair(dir, 'x');
  assert.equal(loaded.status, 'mismatch');
  assert.match(loaded.status === 'mismatch' ? loaded.why : '', /public keys differ/);
});

test('ensurePki re-issues a pair left mismatched by a crash between the two renames, and one from another CA', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await ensurePki({ dir });
  // writePairAtomic renames the key first: a crash right after leaves the new key with the old cert.
  const ca = await loadCa({ certPem: first.caPem, keyPem: await readFile(join(dir, 'ca.key'), 'utf8') });
  const next = await issueCertificate(ca, { commonName: 'nodelet-apiserver', usage: 'server' });
  await writeFile(join(dir, 'apiserver.key'), next.keyPem, { mode: 0o600 });
  assert.equal((await loadPair(dir, 'apiserver')).status, 'mismatch');
  const second = await ensurePki({ dir });
  assert.notEqual(serialOf(second.serving.certPem), serialOf(first.serving.certPem));
  assert.equal((await loadPair(dir, 'apiserver')).status, 'ok');
  assert.equal(second.agentClient.certPem, first.agentClient.certPem, 'the other pair was fine and kept');
  // A leaf signed by some other CA (e.g. left over from an earlier cluster) is replaced too.
  const foreign = await issueCertificate(await loadCa(await createCa('other')), { commonName: 'nodelet-apiserver', organization: 'system:masters', usage: 'client' });
  await writePairAtomic(dir, 'apiserver-kubelet-client', foreign);
  const third = await ensurePki({ dir });
  assert.ok(new X509Certificate(third.agentClient.certPem).verify(new X509Certificate(third.caPem).publicKey));
  assert.equal(third.caPem, first.caPem);
});

test('the server\'s client certificate towards agents is system:kube-apiserver-kubelet-client, never system:masters', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await ensurePki({ dir });
  assert.equal(new X509Certificate(first.agentClient.certPem).subject, `CN=${AGENT_CLIENT_USER}`);
  // One an earlier version wrote (same CA, still valid) is replaced at the next start.
  const ca = await loadCa({ certPem: first.caPem, keyPem: await readFile(join(dir, 'ca.key'), 'utf8') });
  await writePairAtomic(dir, 'apiserver-kubelet-client', await issueCertificate(ca, { commonName: 'nodelet-apiserver', organization: 'system:masters', usage: 'client' }));
  const second = await ensurePki({ dir });
  assert.equal(new X509Certificate(second.agentClient.certPem).subject, `CN=${AGENT_CLIENT_USER}`);
});

test('ensurePki refuses a CA whose key is not its certificate\'s instead of replacing it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await ensurePki({ dir });
  await writeFile(join(dir, 'ca.key'), (await createCa('other')).keyPem);
  await assert.rejects(ensurePki({ dir }), (err: Error & { code?: string }) => err.code === 'ERR_FAILED_PRECONDITION' && /ca\.key does not belong to .*ca\.crt/.test(err.message));
  await rm(join(dir, 'ca.crt'));
  await rm(join(dir, 'ca.key'));
  await assert.rejects(ensurePki({ dir, createCa: false }), (err: Error & { code?: string }) => err.code === 'ERR_FAILED_PRECONDITION');
});

test('ensurePki re-issues leaves within renewBeforeMs of expiry, by the injected clock', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let now = Date.now();
  const first = await ensurePki({ dir, now: () => now });
  now += 300 * DAY;
  assert.equal((await ensurePki({ dir, now: () => now })).serving.certPem, first.serving.certPem, '65 days left: kept');
  now += 40 * DAY;
  const renewed = await ensurePki({ dir, now: () => now });
  assert.notEqual(renewed.serving.certPem, first.serving.certPem, '25 days left: re-issued');
  assert.notEqual(renewed.agentClient.certPem, first.agentClient.certPem);
  assert.ok(describeCertificate(renewed.serving.certPem).notAfter > now + 300 * DAY);
  for (const f of ['apiserver.key', 'apiserver-kubelet-client.key']) assert.equal((await stat(join(dir, f))).mode & 0o777, 0o600, f);
  for (const f of ['apiserver.crt', 'apiserver-kubelet-client.crt']) assert.equal((await stat(join(dir, f))).mode & 0o777, 0o644, f);
});
