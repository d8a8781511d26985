// `nodelet snapshot` against a running `nodelet server` on SQLite: save while it serves, ls,
// restore refused while it runs, restore --force into its data dir once stopped, and the server
// started again on the restored store serves what was there at the snapshot (a ConfigMap and a
// Secret made before it) and not what came after.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ApiClient, CONFIGMAPS, SECRETS, loadKubeconfig } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { cleanups, startServerProcess } from '@nodelet/base/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function nodelet(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--conditions=source', '--import', 'tsx', join(ROOT, 'bin', 'nodelet'), ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

test('nodelet snapshot save, ls and restore on a SQLite server', { timeout: 180_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-snapshot-cli-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'server');
  const serverArgs = ['--disable-controllers'];
  let server = await startServerProcess({ dataDir, args: serverArgs });
  cleanup(() => server.stop());
  let client = new ApiClient(await loadKubeconfig(server.kubeconfig));
  await client.create(CONFIGMAPS, { metadata: { name: 'before', namespace: 'default' }, data: { k: 'v' } });
  await client.create(SECRETS, { metadata: { name: 'before', namespace: 'default' }, stringData: { password: 's3cret' } });

  const saved = await nodelet('snapshot', 'save', '--data-dir', dataDir, '--name', 'lab-1', '-o', 'json');
  assert.equal(saved.code, 0, saved.stderr);
  const snap = JSON.parse(saved.stdout) as { path: string; kind: string; revision: number; objects: number };
  assert.equal(snap.kind, 'sqlite');
  assert.ok(snap.objects > 2, `objects ${snap.objects}`);
  await client.create(CONFIGMAPS, { metadata: { name: 'after', namespace: 'default' } });

  const ls = await nodelet('snapshot', 'ls', '--data-dir', dataDir);
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, new RegExp(`^lab-1-sqlite-\\d{8}T\\d{9}Z\\.db +sqlite .* ${snap.revision} +${snap.objects} `, 'm'));

  const whileRunning = await nodelet('snapshot', 'restore', snap.path, '--data-dir', dataDir, '--force');
  assert.equal(whileRunning.code, 1);
  assert.match(whileRunning.stderr, /is open in process \d+ \(a running server\); stop it first/);

  client.close();
  await server.stop();
  const restored = await nodelet('snapshot', 'restore', snap.path, '--data-dir', dataDir, '--force');
  assert.equal(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, new RegExp(`^Restored .* \\(revision ${snap.revision}, ${snap.objects} objects\\) into ${join(dataDir, 'state.db')}`));

  server = await startServerProcess({ dataDir, args: serverArgs });
  client = new ApiClient(await loadKubeconfig(server.kubeconfig));
  cleanup(() => client.close());
  assert.deepEqual((await client.get(CONFIGMAPS, 'before', { namespace: 'default' })).data, { k: 'v' });
  assert.equal(Buffer.from((await client.get(SECRETS, 'before', { namespace: 'default' })).data!.password!, 'base64').toString(), 's3cret');
  await assert.rejects(client.get(CONFIGMAPS, 'after', { namespace: 'default' }), (err) => hasCode(err, 'ERR_NOT_FOUND'));
});
