// containerd pulls images built by `buildImage` from our read-only registry, by tag and by digest,
// using the hosts.toml the lab runtime writes (plain HTTP), and runs them.
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderHostsToml, run } from '@nodelet/lab-runtime';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';
import { buildImage, DEFAULT_LAB_IMAGE_DIR, LAB_IMAGES, startRegistry } from '@nodelet/oci';
import { cleanups } from '@nodelet/base/testing';

const BRIDGE = { name: 'nlb-pull', subnet: '10.232.2.0/24' };

test('containerd pulls a built image by tag and digest through hosts.toml and runs it', { timeout: 90_000 }, async (t) => {
  const cleanup = cleanups(t);
  if (!requireRoot(t)) return;
  const work = await mkdtemp(join(tmpdir(), 'nodelet-pull-'));
  cleanup(() => rm(work, { recursive: true, force: true }));
  const rt = await startTestRuntime({ name: 'pull', bridge: BRIDGE });
  cleanup(() => rt.stop());

  // 1. A custom two-layer image: the lab busybox plus a file, built into a fresh store and served
  //    by a second registry.
  await writeFile(join(work, 'motd'), 'hello from a nodelet image\n');
  const store = join(work, 'store');
  const built = await buildImage({
    store,
    name: 'lab/motd',
    tag: 'v1',
    base: { ...LAB_IMAGES.busybox, store: DEFAULT_LAB_IMAGE_DIR },
    files: [{ from: join(work, 'motd'), to: '/etc/motd', mode: 0o644 }],
    config: { cmd: ['cat', '/etc/motd'] },
  });
  assert.equal(built.layers.length, 2);
  const reg = await startRegistry({ root: store });
  cleanup(() => reg.close());
  const hostsDir = join(work, 'certs.d');
  await mkdir(join(hostsDir, reg.hostPort), { recursive: true });
  await writeFile(join(hostsDir, reg.hostPort, 'hosts.toml'), renderHostsToml(reg.hostPort));

  const socket = rt.endpoint.slice('unix://'.length);
  const ctr = (...args: string[]) => run('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args]);

  // 2. By tag: containerd resolves with HEAD, then fetches manifest, config and layer.
  const byTag = `${reg.hostPort}/lab/motd:v1`;
  let r = await ctr('images', 'pull', '--hosts-dir', hostsDir, byTag);
  assert.equal(r.code, 0, r.stderr);
  r = await ctr('images', 'ls');
  const line = r.stdout.split('\n').find((l) => l.startsWith(byTag));
  assert.ok(line?.includes(built.manifest.digest), `image listed with the manifest digest: ${line}`);

  // 3. By digest.
  const byDigest = `${reg.hostPort}/lab/motd@${built.manifest.digest}`;
  r = await ctr('images', 'pull', '--hosts-dir', hostsDir, byDigest);
  assert.equal(r.code, 0, r.stderr);

  // 4. Both layers unpack into one rootfs: busybox's `cat` (layer 1) prints /etc/motd (layer 2).
  r = await ctr('run', '--rm', '--fifo-dir', join(work, 'fifo'), byTag, 'motd-probe');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'hello from a nodelet image\n');

  // 5. hosts.toml is really read: a name that does not resolve is served through its [host] entry.
  //    (Loopback registries default to plain HTTP anyway, so steps 2-4 alone would not prove it.)
  const alias = 'lab-registry.invalid:5000';
  await mkdir(join(hostsDir, alias), { recursive: true });
  await writeFile(join(hostsDir, alias, 'hosts.toml'), `server = "http://${alias}"\n\n[host."${reg.url}"]\n  capabilities = ["pull", "resolve"]\n`);
  r = await ctr('images', 'pull', '--hosts-dir', hostsDir, `${alias}/lab/motd:v1`);
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await ctr('images', 'ls', '-q')).stdout.includes(`${alias}/lab/motd:v1`));

  // 6. Unknown tag and unknown digest fail with "not found".
  r = await ctr('images', 'pull', '--hosts-dir', hostsDir, `${reg.hostPort}/lab/motd:nope`);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /not found/);
  r = await ctr('images', 'pull', '--hosts-dir', hostsDir, `${reg.hostPort}/lab/motd@sha256:${'0'.repeat(64)}`);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /not found/);
});
