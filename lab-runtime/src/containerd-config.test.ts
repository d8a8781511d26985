import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIRRORED_REGISTRIES, renderBridgeConflist, renderContainerdConfig, renderHostsToml, renderMirrorHostsToml } from './containerd-config.js';
import { writeMirrorHosts } from './containerd.js';

const opts = {
  root: '/tmp/x/root',
  state: '/tmp/x/state',
  socket: '/tmp/x/containerd.sock',
  sandboxImage: '127.0.0.1:5000/pause:3.9',
  cniBinDir: '/usr/lib/cni',
  cniConfDir: '/tmp/x/net.d',
  certsDir: '/tmp/x/certs.d',
};

test('private containerd config moves every host-wide path under root/state', () => {
  const toml = renderContainerdConfig(opts);
  for (const line of [
    'version = 2',
    'root = "/tmp/x/root"',
    'state = "/tmp/x/state"',
    '  address = "/tmp/x/containerd.sock"',
    '  address = "/tmp/x/containerd.sock.ttrpc"',
    '  path = "/tmp/x/root/opt"',
    '  sandbox_image = "127.0.0.1:5000/pause:3.9"',
    '  restrict_oom_score_adj = true',
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    '  netns_mounts_under_state_dir = true',
    '    snapshotter = "overlayfs"',
    '        SystemdCgroup = false',
    '        Root = "/tmp/x/state/runc"',
    '    bin_dir = "/usr/lib/cni"',
    '    conf_dir = "/tmp/x/net.d"',
    '    config_path = "/tmp/x/certs.d"',
  ]) {
    assert.ok(toml.split('\n').includes(line), `missing line ${JSON.stringify(line)}`);
  }
  // Top-level keys must come before the first table or TOML assigns them to that table.
  const firstTable = toml.split('\n').findIndex((l) => l.startsWith('['));
  const disabled = toml.split('\n').findIndex((l) => l.startsWith('disabled_plugins'));
  assert.ok(disabled >= 0 && disabled < firstTable);
});

test('strings are TOML-escaped', () => {
  assert.match(renderContainerdConfig({ ...opts, root: '/tmp/a "b"\\c' }), /^root = "\/tmp\/a \\"b\\"\\\\c"$/m);
});

test('hosts.toml marks the registry plain http', () => {
  assert.equal(
    renderHostsToml('127.0.0.1:41234'),
    '# Written by nodelet: 127.0.0.1:41234 is a local read-only registry over plain HTTP.\nserver = "http://127.0.0.1:41234"\n\n[host."http://127.0.0.1:41234"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n',
  );
});

test('bridge conflist: bridge + host-local on the given subnet, no masquerade', () => {
  const c = JSON.parse(renderBridgeConflist({ networkName: 'n1', bridge: 'nlb0', subnet: '10.232.0.0/24', ipamDataDir: '/tmp/ipam' }));
  assert.equal(c.name, 'n1');
  assert.equal(c.plugins.length, 1);
  assert.deepEqual(
    { type: c.plugins[0].type, bridge: c.plugins[0].bridge, ipMasq: c.plugins[0].ipMasq, subnet: c.plugins[0].ipam.ranges[0][0].subnet, dataDir: c.plugins[0].ipam.dataDir },
    { type: 'bridge', bridge: 'nlb0', ipMasq: false, subnet: '10.232.0.0/24', dataDir: '/tmp/ipam' },
  );
});

test('a crun handler is configured beside runc when a crun binary is given, with its own private root', () => {
  const without = renderContainerdConfig(opts);
  assert.ok(!without.includes('runtimes.crun'), 'no crun handler unless asked');
  const toml = renderContainerdConfig({ ...opts, crunBinary: '/usr/bin/crun' }).split('\n');
  const at = toml.indexOf('    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun]');
  assert.ok(at > 0, 'crun runtime table');
  assert.deepEqual(toml.slice(at + 1, at + 6), [
    '      runtime_type = "io.containerd.runc.v2"',
    '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun.options]',
    '        BinaryName = "/usr/bin/crun"',
    '        SystemdCgroup = false',
    '        Root = "/tmp/x/state/crun"',
  ]);
  assert.ok(toml.includes('    default_runtime_name = "runc"'), 'runc stays the default');
});

test('renderMirrorHostsToml: the lab registry first over plain HTTP, the upstream as server', () => {
  const toml = renderMirrorHostsToml('docker.io', '127.0.0.1:5000');
  assert.match(toml, /^server = "https:\/\/registry-1\.docker\.io"$/m);
  assert.match(toml, /^\[host\."http:\/\/127\.0\.0\.1:5000"\]$/m);
  assert.match(toml, /^ {2}capabilities = \["pull", "resolve"\]$/m);
  assert.doesNotMatch(toml, /skip_verify/, 'plain HTTP needs no TLS setting');
  assert.match(renderMirrorHostsToml('quay.io', '10.0.0.1:5000'), /^server = "https:\/\/quay\.io"$/m);
  assert.match(renderMirrorHostsToml('quay.io', '10.0.0.1:5000', 'http://127.0.0.1:9'), /^server = "http:\/\/127\.0\.0\.1:9"$/m);
});

test('writeMirrorHosts writes one hosts.toml per mirrored registry', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-mirrors-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeMirrorHosts(dir, '127.0.0.1:5000');
  assert.deepEqual((await readdir(dir)).sort(), [...MIRRORED_REGISTRIES].sort());
  assert.deepEqual(['docker.io', 'registry.k8s.io', 'quay.io', 'ghcr.io', 'gcr.io'].sort(), [...MIRRORED_REGISTRIES].sort());
  assert.equal(await readFile(join(dir, 'gcr.io', 'hosts.toml'), 'utf8'), renderMirrorHostsToml('gcr.io', '127.0.0.1:5000'));
});
