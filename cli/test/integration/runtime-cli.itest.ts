// `nodelet runtime up|status|down` as a user runs them: separate processes, containerd in the background.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { requireRoot } from '@nodelet/lab-runtime/testing';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));

function nodelet(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(NODELET, args, { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('runtime up starts a background containerd, status reports it, down stops it', { timeout: 120_000 }, async (t) => {
  if (!requireRoot(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-runtime-cli-'));
  const flags = ['--dir', dir];
  t.after(async () => {
    nodelet('runtime', 'down', ...flags);
    await rm(dir, { recursive: true, force: true });
  });

  let r = nodelet('runtime', 'status', ...flags);
  assert.equal(r.code, 3);
  assert.match(r.stdout, /^down /);

  r = nodelet('runtime', 'up', ...flags, '--cni-bin-dir', '/usr/lib/cni', '--cni-conf-dir', join(dir, 'net.d'), '--registry', '127.0.0.1:5999');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^started: containerd \S+ \(pid \d+\), CRI v1$/m);
  const pid = Number(readFileSync(join(dir, 'containerd.pid'), 'utf8'));
  assert.ok(existsSync(`/proc/${pid}`), 'containerd outlives `runtime up`');
  assert.match(readFileSync(join(dir, 'config.toml'), 'utf8'), /sandbox_image = "127\.0\.0\.1:5999\/pause:3\.9"/);
  assert.ok(existsSync(join(dir, 'certs.d', '127.0.0.1:5999', 'hosts.toml')));

  r = nodelet('runtime', 'up', ...flags);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^already running: containerd \\S+ \\(pid ${pid}\\)`, 'm'));

  r = nodelet('runtime', 'status', ...flags, '-o', 'json');
  assert.equal(r.code, 0);
  const s = JSON.parse(r.stdout);
  assert.equal(s.running, true);
  assert.equal(s.criReady, true);
  assert.equal(s.pid, pid);
  assert.equal(s.endpoint, `unix://${dir}/containerd.sock`);
  const cond = Object.fromEntries(s.conditions.map((c: { type: string; status: boolean }) => [c.type, c.status]));
  assert.deepEqual(cond, { RuntimeReady: true, NetworkReady: false }, 'no conflist in the conf dir yet: network not ready');

  r = nodelet('runtime', 'status', ...flags);
  assert.match(r.stdout, /^ {2}RuntimeReady=true\n {2}NetworkReady=false \(NetworkPluginNotReady: .*cni.*\)$/m);

  r = nodelet('runtime', 'down', ...flags);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `stopped containerd (pid ${pid})\n`);
  assert.equal(existsSync(`/proc/${pid}/cmdline`) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir), false, 'containerd is gone');
  assert.equal(existsSync(join(dir, 'containerd.sock')), false);
  assert.equal(existsSync(join(dir, 'config.toml')), true, 'config kept for the next up');

  r = nodelet('runtime', 'down', ...flags);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'not running\n');
});

test('runtime up --print-dropin prints the distro drop-in and the imports line', () => {
  const r = nodelet('runtime', 'up', '--print-dropin', '--registry', '10.0.0.5:5000', '--containerd-dir', '/etc/containerd');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^imports = \["\/etc\/containerd\/conf\.d\/\*\.toml"\]$/m);
  assert.match(r.stdout, /^# ---- \/etc\/containerd\/conf\.d\/50-nodelet\.toml$/m);
  assert.match(r.stdout, /sandbox_image = "10\.0\.0\.5:5000\/pause:3\.9"/);
  assert.match(r.stdout, /^# ---- \/etc\/containerd\/certs\.d\/10\.0\.0\.5:5000\/hosts\.toml$/m);
});
