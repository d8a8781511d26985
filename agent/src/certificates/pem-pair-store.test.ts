import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyAndCsr } from '@nodelet/api';
import { FakeClock } from '@nodelet/base/testing';
import { createTestCa } from '../testing/test-ca.js';
import { PemPairStore } from './pem-pair-store.js';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-pem-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const ca = await createTestCa();
  const pair = async () => {
    const { keyPem, csrPem } = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ips: ['192.0.2.1'] });
    return { keyPem, certPem: await ca.sign(csrPem, clock.now(), clock.now() + 86_400_000) };
  };
  const pki = join(dir, 'pki');
  return { dir, pki, clock, pair, store: new PemPairStore({ dir: pki, pairName: 'kubelet-server', clock }) };
}

test('one 0600 file per pair, cert then key, behind a kubelet-server-current.pem symlink', async (t) => {
  const { pki, clock, pair, store } = await setup(t);
  assert.deepEqual(await store.load(), { status: 'missing' });
  const first = await pair();
  const path = await store.update(first.certPem, first.keyPem);
  assert.equal(path, join(pki, 'kubelet-server-2026-01-01-00-00-00.pem'));
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(pki)).mode & 0o777, 0o700);
  assert.ok((await lstat(store.currentPath)).isSymbolicLink());
  assert.equal(await readlink(store.currentPath), 'kubelet-server-2026-01-01-00-00-00.pem', 'relative: the directory can move');
  const text = await readFile(path, 'utf8');
  assert.ok(text.indexOf('BEGIN CERTIFICATE') < text.indexOf('BEGIN PRIVATE KEY'), 'certificate first, then the key');
  const loaded = await store.load();
  assert.equal(loaded.status, 'ok');
  if (loaded.status !== 'ok') return;
  assert.equal(loaded.pair.path, path);
  assert.equal(loaded.pair.keyPem.trim(), first.keyPem.trim());
  assert.deepEqual(loaded.pair.info.dnsNames, ['n1']);
  assert.deepEqual(loaded.pair.info.ips, ['192.0.2.1']);
  assert.equal(loaded.pair.info.notAfter, Date.UTC(2026, 0, 2));

  // Rotations: the current moves on, the previous file is kept, older ones pruned.
  clock.advance(3600_000);
  const second = await pair();
  const p2 = await store.update(second.certPem, second.keyPem);
  clock.advance(3600_000);
  const third = await pair();
  const p3 = await store.update(third.certPem, third.keyPem);
  assert.equal(await readlink(store.currentPath), 'kubelet-server-2026-01-01-02-00-00.pem');
  assert.deepEqual((await readdir(pki)).sort(), ['kubelet-server-2026-01-01-01-00-00.pem', 'kubelet-server-2026-01-01-02-00-00.pem', 'kubelet-server-current.pem']);
  assert.ok(p2 !== p3);
  const now = await store.load();
  assert.equal(now.status === 'ok' && now.pair.keyPem.trim(), third.keyPem.trim());
  // Two in the same second do not overwrite each other.
  const fourth = await pair();
  assert.equal(await store.update(fourth.certPem, fourth.keyPem), join(pki, 'kubelet-server-2026-01-01-02-00-00-1.pem'));
});

test('a file whose key is not its certificate\'s, or with no key, is invalid (never served)', async (t) => {
  const { pki, pair, store } = await setup(t);
  const a = await pair();
  const b = await pair();
  await store.update(a.certPem, a.keyPem);
  const mixed = join(pki, 'kubelet-server-mixed.pem');
  await writeFile(mixed, `${a.certPem}${b.keyPem}`, { mode: 0o600 });
  await rm(store.currentPath);
  await symlink('kubelet-server-mixed.pem', store.currentPath);
  const loaded = await store.load();
  assert.equal(loaded.status, 'invalid');
  assert.match(loaded.status === 'invalid' ? loaded.why : '', /private key does not belong/);
  await writeFile(mixed, a.certPem);
  const noKey = await store.load();
  assert.match(noKey.status === 'invalid' ? noKey.why : '', /does not hold a certificate and one private key/);
});

test('a crash leaves the previous pair current: temp links of an interrupted swap are ignored and cleaned', async (t) => {
  const { pki, pair, store } = await setup(t);
  const a = await pair();
  await store.update(a.certPem, a.keyPem);
  // An interrupted update: the new file and a temp link were written, the rename did not happen.
  await writeFile(join(pki, 'kubelet-server-2026-01-01-00-00-01.pem'), 'half');
  await symlink('kubelet-server-2026-01-01-00-00-01.pem', join(pki, '.kubelet-server-current.pem.tmp-abc'));
  const loaded = await store.load();
  assert.equal(loaded.status === 'ok' && loaded.pair.keyPem.trim(), a.keyPem.trim());
  const b = await pair();
  await store.update(b.certPem, b.keyPem);
  assert.ok(!(await readdir(pki)).some((n) => n.includes('.tmp-')));
});
