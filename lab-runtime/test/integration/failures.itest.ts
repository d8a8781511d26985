// Failed starts are rolled back: no containerd left running, no temp dir left, and the error says why.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { containerdPaths, findProcesses, startContainerd, writeContainerdFiles } from '@nodelet/lab-runtime';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';

test('a containerd that cannot start: the error carries its log, nothing keeps running', async (t) => {
  if (!requireRoot(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-badcfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = containerdPaths(dir);
  // Our own root/state/socket, then invalid TOML: containerd exits while loading the config.
  await writeFile(p.configPath, `version = 2\nroot = "${p.root}"\nstate = "${p.state}"\n[grpc]\n  address = "${p.socket}"\n[broken\n`);
  await assert.rejects(startContainerd(p, { readyTimeoutMs: 10_000 }), (err: Error) => {
    assert.ok(hasCode(err, 'ERR_UNAVAILABLE'), err.message);
    assert.match(err.message, /containerd exited \(1\) before CRI was ready; log .*containerd\.log:\n[\s\S]*(toml|parse|load)/i);
    return true;
  });
  assert.deepEqual(await findProcesses((argv) => argv.includes(p.configPath)), []);
});

test('a config that would share host-wide state is refused before containerd starts', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-sharedcfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = containerdPaths(dir);
  await writeFile(p.configPath, 'version = 2\n');
  await assert.rejects(startContainerd(p), (err: Error) => {
    assert.ok(hasCode(err, 'ERR_FAILED_PRECONDITION'), err.message);
    assert.match(err.message, /lacks root = ".*", state = ".*", address = ".*containerd\.sock": refusing/);
    return true;
  });
});

test('containerd binary missing: ERR_FAILED_PRECONDITION saying what to install', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-nobin-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = containerdPaths(dir);
  await writeContainerdFiles(p, { sandboxImage: 'x/pause:1', cniBinDir: '/usr/lib/cni', cniConfDir: join(dir, 'net.d'), plainHttpRegistries: [] });
  await assert.rejects(startContainerd(p, { binary: join(dir, 'no-containerd') }), (err: Error) => {
    return hasCode(err, 'ERR_FAILED_PRECONDITION') && /apt-get install containerd/.test(err.message);
  });
});

test('startTestRuntime aborted midway leaves no temp dir', async (t) => {
  if (!requireRoot(t)) return;
  const before = new Set((await readdir(tmpdir())).filter((n) => n.startsWith('nodelet-rt-aborted-')));
  const ac = new AbortController();
  const started = startTestRuntime({ name: 'aborted', bridge: { name: 'nlb-abort', subnet: '10.232.4.0/24' }, signal: ac.signal });
  setImmediate(() => ac.abort());
  await assert.rejects(started, { name: 'AbortError' });
  const after = (await readdir(tmpdir())).filter((n) => n.startsWith('nodelet-rt-aborted-') && !before.has(n));
  assert.deepEqual(after, []);
  assert.deepEqual(await findProcesses((argv) => argv.some((a) => a.includes('/nodelet-rt-aborted-'))), []);
});
