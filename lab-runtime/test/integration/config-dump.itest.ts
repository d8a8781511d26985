// containerd itself parses the configs we write: `containerd --config … config dump` prints the
// merged result (imports applied) without starting a daemon.
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { containerdPaths, installDropin, run, writeContainerdFiles } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';

async function dump(config: string): Promise<string> {
  const r = await run('containerd', ['--config', config, 'config', 'dump']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

test('the private lab config is what containerd loads', async (t) => {
  if (!requireRoot(t)) return;
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-cfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = containerdPaths(dir);
  await writeContainerdFiles(p, { sandboxImage: '127.0.0.1:5000/pause:3.9', cniBinDir: '/usr/lib/cni', cniConfDir: join(dir, 'net.d'), plainHttpRegistries: ['127.0.0.1:5000'] });
  const out = await dump(p.configPath);
  for (const want of [
    `root = "${p.root}"`,
    `state = "${p.state}"`,
    `address = "${p.socket}"`,
    'restrict_oom_score_adj = true',
    'sandbox_image = "127.0.0.1:5000/pause:3.9"',
    'netns_mounts_under_state_dir = true',
    `Root = "${p.state}/runc"`,
    `config_path = "${p.certsDir}"`,
    'stream_server_port = "0"',
  ]) {
    assert.ok(out.includes(want), `config dump lacks ${want}`);
  }
  assert.ok(existsSync(join(p.certsDir, '127.0.0.1:5000', 'hosts.toml')));
});

test('the drop-in replaces the distro CRI section through imports', async (t) => {
  if (!requireRoot(t)) return;
  if (!existsSync('/etc/containerd/config.toml')) return t.skip('no distro /etc/containerd/config.toml to start from');
  const etc = await mkdtemp(join(tmpdir(), 'nodelet-etc-'));
  t.after(() => rm(etc, { recursive: true, force: true }));
  await copyFile('/etc/containerd/config.toml', join(etc, 'config.toml'));
  await installDropin({ etcDir: etc, registry: '127.0.0.1:5000', systemdCgroup: true });
  const out = await dump(join(etc, 'config.toml'));
  assert.ok(out.includes(`imports = ["${join(etc, 'config.toml')}", "${join(etc, 'conf.d', '50-nodelet.toml')}"]`), 'drop-in imported');
  assert.ok(out.includes('sandbox_image = "127.0.0.1:5000/pause:3.9"'));
  assert.ok(out.includes('restrict_oom_score_adj = true'));
  assert.ok(out.includes('SystemdCgroup = true'));
  assert.ok(out.includes('bin_dir = "/opt/cni/bin"'), 'the CNI dirs nodelet owns replace the distro ones');
  assert.ok(out.includes(`config_path = "${join(etc, 'certs.d')}"`));
});
