import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatKubeconfig, loadKubeconfig } from '../kubeconfig.js';
import { lifetimePath, locateCredential, readCredential, writeCredential } from './node-credential-file.js';

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-cred-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const lifetime = { issuedAt: Date.UTC(2026, 0, 1), expiresAt: Date.UTC(2027, 0, 1) };

test('token file: located through the kubeconfig, replaced 0600 with its lifetime, read back by the client', async (t) => {
  const dir = await tempDir(t);
  const kubeconfig = join(dir, 'agent.kubeconfig');
  await writeFile(kubeconfig, formatKubeconfig({ server: 'https://127.0.0.1:6443', tokenFile: 'agent.token', user: 'system:node:n1' }));
  const loc = await locateCredential(kubeconfig);
  assert.deepEqual(loc, { kind: 'tokenFile', path: join(dir, 'agent.token') }, 'a relative tokenFile is resolved against the kubeconfig');
  const old = process.umask(0o000);
  try {
    await writeCredential(loc!, 'node.aaaaaa.first', lifetime);
  } finally {
    process.umask(old);
  }
  assert.equal((await stat(join(dir, 'agent.token'))).mode & 0o777, 0o600, 'whatever the umask');
  assert.equal((await stat(lifetimePath(loc!))).mode & 0o777, 0o600);
  assert.deepEqual(await readCredential(loc!), { token: 'node.aaaaaa.first', lifetime });
  assert.equal((await loadKubeconfig(kubeconfig)).tokenFile, join(dir, 'agent.token'));
  assert.deepEqual((await readdir(dir)).sort(), ['agent.kubeconfig', 'agent.token', 'agent.token.lifetime.json'], 'no temp files left');
});

test('a lifetime record of another token is ignored: a crash between the two writes leaves the lifetime unknown, not wrong', async (t) => {
  const dir = await tempDir(t);
  const loc = { kind: 'tokenFile' as const, path: join(dir, 'agent.token') };
  await writeCredential(loc, 'node.aaaaaa.first', lifetime);
  // The token was replaced but the process died before the record was.
  await writeFile(loc.path, 'node.bbbbbb.second\n');
  assert.deepEqual(await readCredential(loc), { token: 'node.bbbbbb.second' });
  await writeFile(lifetimePath(loc), 'not json');
  assert.deepEqual(await readCredential(loc), { token: 'node.bbbbbb.second' });
});

test('inline token: the kubeconfig user entry is rewritten in place, the rest kept', async (t) => {
  const dir = await tempDir(t);
  const kubeconfig = join(dir, 'agent.kubeconfig');
  await writeFile(kubeconfig, formatKubeconfig({ server: 'https://10.0.0.1:6443', caData: 'CA', token: 'node.aaaaaa.first', user: 'system:node:n1' }));
  const loc = await locateCredential(kubeconfig);
  assert.deepEqual(loc, { kind: 'kubeconfig', path: kubeconfig, user: 'system:node:n1' });
  await writeCredential(loc!, 'node.bbbbbb.second', lifetime);
  const cfg = await loadKubeconfig(kubeconfig);
  assert.equal(cfg.token, 'node.bbbbbb.second');
  assert.equal(cfg.server, 'https://10.0.0.1:6443');
  assert.equal(String(cfg.ca), 'CA');
  assert.deepEqual(await readCredential(loc!), { token: 'node.bbbbbb.second', lifetime });
  assert.equal((await stat(kubeconfig)).mode & 0o777, 0o600);
});

test('a client-certificate user has no token to rotate', async (t) => {
  const dir = await tempDir(t);
  const kubeconfig = join(dir, 'k');
  await writeFile(kubeconfig, formatKubeconfig({ server: 'https://h:6443', clientCertificateData: 'C', clientKeyData: 'K' }));
  assert.equal(await locateCredential(kubeconfig), undefined);
  assert.match(await readFile(kubeconfig, 'utf8'), /client-certificate-data/);
});
