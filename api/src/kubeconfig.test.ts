import { test } from 'node:test';
import assert from 'node:assert/strict';
import fsp, { mkdtemp, open, readdir, rm, stat, writeFile, readFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@nodelet/base';
import { defaultKubeconfigPath, formatKubeconfig, loadKubeconfig, parseKubeconfig, writeKubeconfig } from './kubeconfig.js';

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-kubeconfig-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('writeKubeconfig writes mode 0600 and loadKubeconfig reads it back', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'sub', 'admin.kubeconfig');
  await writeKubeconfig(file, { server: 'https://127.0.0.1:6443', caData: CA, token: 's3cret', user: 'admin', cluster: 'lab', context: 'lab-admin' });
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const cfg = await loadKubeconfig(file);
  assert.equal(cfg.server, 'https://127.0.0.1:6443');
  assert.equal(cfg.ca?.toString(), CA);
  assert.equal(cfg.token, 's3cret');
  assert.equal(cfg.context, 'lab-admin');
  assert.equal(cfg.cluster, 'lab');
  assert.equal(cfg.user, 'admin');
  assert.equal(cfg.namespace, 'default');
  assert.equal(cfg.insecureSkipTlsVerify, undefined);
  const text = await readFile(file, 'utf8');
  assert.match(text, /certificate-authority-data: /);
  assert.match(text, /current-context: lab-admin/);
});

test('writeKubeconfig replaces a file atomically: fsynced temp renamed over it; a failed write keeps the old file, no temp left', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'admin.kubeconfig');
  await writeFile(file, 'old', { mode: 0o644 });
  const probe = await open(file);
  const fileHandle = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
  await probe.close();
  const synced = t.mock.method(fileHandle, 'sync');
  await writeKubeconfig(file, { server: 'https://127.0.0.1:6443', caData: CA, token: 'first' });
  assert.equal((await stat(file)).mode & 0o777, 0o600, 'an existing 0644 file ends 0600');
  assert.equal((await loadKubeconfig(file)).token, 'first');
  assert.ok(synced.mock.callCount() >= 2, 'the temp file and the directory are fsynced');
  // The rename fails after the temp file is complete: the target must still be the old file.
  const rename = t.mock.method(fsp, 'rename', async () => { throw Object.assign(new Error('injected'), { code: 'EIO' }); });
  syncBuiltinESMExports();
  try {
    await assert.rejects(writeKubeconfig(file, { server: 'https://127.0.0.1:6443', caData: CA, token: 'second' }), (e) => hasCode(e, 'ERR_INTERNAL'));
    assert.equal(rename.mock.callCount(), 1);
  } finally {
    rename.mock.restore();
    syncBuiltinESMExports();
  }
  assert.equal((await loadKubeconfig(file)).token, 'first');
  assert.deepEqual(await readdir(dir), ['admin.kubeconfig']);
});

test('parseKubeconfig resolves file references relative to the kubeconfig and picks a context', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'ca.crt'), CA);
  await writeFile(join(dir, 'client.crt'), 'CERT');
  await writeFile(join(dir, 'client.key'), 'KEY');
  await writeFile(join(dir, 'token'), 'tok\n');
  const text = `
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c1
  cluster: { server: "https://10.0.0.1:6443", certificate-authority: ca.crt }
- name: c2
  cluster: { server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true }
users:
- name: u1
  user: { client-certificate: client.crt, client-key: client.key }
- name: u2
  user: { tokenFile: token }
contexts:
- name: a
  context: { cluster: c1, user: u1, namespace: kube-system }
- name: b
  context: { cluster: c2, user: u2 }
`;
  const a = await parseKubeconfig(text, { baseDir: dir });
  assert.equal(a.server, 'https://10.0.0.1:6443');
  assert.equal(a.ca?.toString(), CA);
  assert.equal(a.cert?.toString(), 'CERT');
  assert.equal(a.key?.toString(), 'KEY');
  assert.equal(a.namespace, 'kube-system');
  const b = await parseKubeconfig(text, { baseDir: dir, context: 'b' });
  assert.equal(b.server, 'http://127.0.0.1:8080');
  assert.equal(b.insecureSkipTlsVerify, true);
  assert.equal(b.tokenFile, join(dir, 'token'));
  assert.equal(b.ca, undefined);
});

test('parseKubeconfig explains what is wrong', async () => {
  const bad = async (text: string, re: RegExp, context?: string): Promise<void> => {
    await assert.rejects(parseKubeconfig(text, { baseDir: '/', context }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && re.test((e as Error).message));
  };
  await bad('clusters: []', /no current-context/);
  await bad('current-context: x\ncontexts: []', /context "x" not found/);
  await bad('current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {}}]\nusers: [{name: u, user: {}}]', /has no server/);
  await bad(
    'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://h"}}]\nusers: [{name: u, user: {exec: {command: aws}}}]',
    /exec\/auth-provider/,
  );
  await bad(
    'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://h", certificate-authority: /nonexistent/ca}}]\nusers: [{name: u, user: {}}]',
    /cannot read certificate-authority/,
  );
  await bad('[: not yaml', /not valid YAML/);
});

test('loadKubeconfig of a missing file is ERR_NOT_FOUND naming the path', async () => {
  await assert.rejects(loadKubeconfig('/nonexistent/kubeconfig'), (e) => hasCode(e, 'ERR_NOT_FOUND') && /\/nonexistent\/kubeconfig/.test((e as Error).message));
});

test('defaultKubeconfigPath honours KUBECONFIG', () => {
  assert.equal(defaultKubeconfigPath({ KUBECONFIG: '/a:/b' }), '/a');
  assert.match(defaultKubeconfigPath({}), /\.kube\/config$/);
});

test('several servers travel in the nodelet.io/servers cluster extension; kubectl keeps the one server', async () => {
  const text = formatKubeconfig({ server: 'https://a:6443', servers: ['https://a:6443', 'https://b:6443'], token: 't' });
  assert.match(text, /server: https:\/\/a:6443/);
  const cfg = await parseKubeconfig(text, { baseDir: '/' });
  assert.equal(cfg.server, 'https://a:6443');
  assert.deepEqual(cfg.servers, ['https://a:6443', 'https://b:6443']);
  assert.equal((await parseKubeconfig(formatKubeconfig({ server: 'https://a:6443' }), { baseDir: '/' })).servers, undefined, 'one server: no extension');
  const bad = text.replace('https://b:6443', 'b:6443');
  await assert.rejects(parseKubeconfig(bad, { baseDir: '/' }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /"b:6443", not an http\(s\):\/\/ URL/.test(String(e)));
});
