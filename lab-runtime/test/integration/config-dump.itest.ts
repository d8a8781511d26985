// containerd itself parses the configs we write: `containerd --config … config dump` prints the
// merged result (imports applied) without starting a daemon.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

// Debian 12's containerd package ships this /etc/containerd/config.toml. The test writes its own
// copy rather than reading the host's: CI machines differ in what (if anything) is there.
const DEBIAN_CONFIG = `version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
`;

for (const [name, distro] of [
  ['Debian 12 package config', DEBIAN_CONFIG],
  ['a config with imports of its own', `version = 2\nimports = ["EXTRA"]\n${DEBIAN_CONFIG.slice('version = 2\n'.length)}`],
] as const) {
  test(`the drop-in replaces the distro CRI section through imports (${name})`, async (t) => {
    if (!requireRoot(t)) return;
    const etc = await mkdtemp(join(tmpdir(), 'nodelet-etc-'));
    t.after(() => rm(etc, { recursive: true, force: true }));
    await writeFile(join(etc, 'extra.toml'), 'version = 2\n');
    await writeFile(join(etc, 'config.toml'), distro.replace('EXTRA', join(etc, 'extra.toml')));
    await installDropin({ etcDir: etc, registry: '127.0.0.1:5000', systemdCgroup: true });
    const out = await dump(join(etc, 'config.toml'));
    const imports = /^imports = \[(.*)\]$/m.exec(out)?.[1] ?? '';
    assert.ok(imports.includes(`"${join(etc, 'conf.d', '50-nodelet.toml')}"`), `drop-in imported (imports = [${imports}])`);
    assert.ok(out.includes('sandbox_image = "127.0.0.1:5000/pause:3.9"'));
    assert.ok(out.includes('restrict_oom_score_adj = true'));
    assert.ok(out.includes('SystemdCgroup = true'));
    assert.ok(out.includes('bin_dir = "/opt/cni/bin"'), 'the CNI dirs nodelet owns replace the distro ones');
    assert.ok(out.includes(`config_path = "${join(etc, 'certs.d')}"`));
  });
}
