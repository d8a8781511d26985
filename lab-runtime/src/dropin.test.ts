import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { installDropin, renderDropin, withImports } from './dropin.js';

test('withImports adds, extends, or leaves the imports key', () => {
  const imp = 'imports = ["/etc/containerd/conf.d/*.toml"]';
  assert.equal(withImports('version = 2\n\n[plugins]\n'), `version = 2\n${imp}\n\n[plugins]\n`);
  assert.equal(withImports('[plugins]\n'), `version = 2\n${imp}\n[plugins]\n`);
  assert.equal(withImports(`version = 2\n${imp}\n`), undefined);
  assert.equal(withImports('version = 2\nimports = ["/x/*.toml"]\n'), 'version = 2\nimports = ["/x/*.toml", "/etc/containerd/conf.d/*.toml"]\n');
  assert.equal(withImports('version = 2\nimports = []\n'), `version = 2\n${imp}\n`);
});

test('renderDropin: the CRI section and the registry hosts.toml', () => {
  const [cri, hosts] = renderDropin({ etcDir: '/etc/containerd', registry: '10.0.0.1:5000', systemdCgroup: true });
  assert.equal(cri!.path, '/etc/containerd/conf.d/50-nodelet.toml');
  assert.match(cri!.content, /^version = 2$/m);
  assert.match(cri!.content, /sandbox_image = "10\.0\.0\.1:5000\/pause:3\.9"/);
  assert.match(cri!.content, /restrict_oom_score_adj = true/);
  assert.match(cri!.content, /SystemdCgroup = true/);
  assert.match(cri!.content, /config_path = "\/etc\/containerd\/certs\.d"/);
  assert.match(cri!.content, /bin_dir = "\/opt\/cni\/bin"/);
  assert.doesNotMatch(cri!.content, /netns_mounts_under_state_dir|Root =/, 'distro containerd keeps its default runc root and netns dir');
  assert.equal(hosts!.path, '/etc/containerd/certs.d/10.0.0.1:5000/hosts.toml');
  assert.match(hosts!.content, /^server = "http:\/\/10\.0\.0\.1:5000"$/m);
  assert.match(hosts!.content, /^\[host\."http:\/\/10\.0\.0\.1:5000"\]$/m);
  assert.match(hosts!.content, /capabilities = \["pull", "resolve"\]/);
});

test('installDropin writes the files once and is idempotent', async (t) => {
  const etc = await mkdtemp(join(tmpdir(), 'nodelet-dropin-'));
  t.after(() => rm(etc, { recursive: true, force: true }));
  await mkdir(etc, { recursive: true });
  await writeFile(join(etc, 'config.toml'), 'version = 2\n\n[plugins]\n');
  const first = await installDropin({ etcDir: etc, registry: '127.0.0.1:5000', systemdCgroup: false });
  assert.equal(first.importsAdded, true);
  assert.deepEqual(first.written.sort(), [join(etc, 'certs.d/127.0.0.1:5000/hosts.toml'), join(etc, 'conf.d/50-nodelet.toml'), join(etc, 'config.toml')].sort());
  assert.match(await readFile(join(etc, 'config.toml'), 'utf8'), new RegExp(`imports = \\["${etc}/conf\\.d/\\*\\.toml"\\]`));
  const second = await installDropin({ etcDir: etc, registry: '127.0.0.1:5000', systemdCgroup: false });
  assert.deepEqual(second, { written: [], importsAdded: false });
});
