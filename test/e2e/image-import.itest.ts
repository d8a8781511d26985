// Real images into an offline lab: `nodelet image import` of a three-layer image (layers
// uncompressed, gzip and zstd; the top one deletes a file with a `.wh.` whiteout and empties a
// directory with `.wh..wh..opq`), as a docker save archive and as an OCI image-layout tar, into
// the store the lab's registry serves; then a pod of each printed pull reference runs on the lab
// cluster, and the container's filesystem is the layers merged with the whiteouts applied.
// Then the same image imported as quay.io/x/y:1 and the lab busybox run by their unmodified names
// through the registry mirror. Finally containerd's own importer (`ctr images import`) reads what `nodelet image export` writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { DEFAULT_LAB_IMAGE_DIR, ensureLabImages } from '@nodelet/oci';
import { dockerArchiveFiles, ociArchiveFiles, whiteoutImage, writeTarArchive } from '@nodelet/oci/testing';
import { kubectl } from './helpers.js';
import { freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nle-img';
const NODELET = fileURLToPath(new URL('../../bin/nodelet-dev', import.meta.url));

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('nodelet image import: docker save and OCI archives with whiteouts run as pods from the lab registry', async (t) => {
  if (!requireRoot(t)) return;
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-image-'));
  // A private copy of the lab images: the import must not touch the store other tests share.
  const labs = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR);
  const imagesDir = join(stateDir, 'images');
  cpSync(labs.dir, imagesDir, { recursive: true });
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const registry = `127.0.0.1:${regPort}`;
  const lab = { stateDir, apiPort, registry, clusterCidr: '10.238.0.0/16', bridge: BRIDGE, nodeName: 'img-node', nodeApiPort: nodePort, healthzPort, imagesDir };
  t.after(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });
  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);

  // 1. The archives, made with the tar package; the image runs `busybox sleep 3600`.
  const img = await whiteoutImage({ busybox: '/bin/busybox' });
  const dockerTar = join(stateDir, 'docker-save.tar');
  const ociTar = join(stateDir, 'oci-layout.tar');
  await writeTarArchive(dockerTar, dockerArchiveFiles([{ image: img, repoTags: ['docker.io/library/whiteouts:docker'] }]));
  await writeTarArchive(ociTar, ociArchiveFiles([{ image: img, names: ['ghcr.io/lab/whiteouts:oci'] }]));

  // 2. Import both into the store the running registry serves; each tag prints its pull reference.
  const refs: string[] = [];
  for (const [archive, name] of [[dockerTar, 'whiteouts:docker'], [ociTar, 'lab/whiteouts:oci']] as const) {
    const r = await run(NODELET, ['image', 'import', archive, '--store', imagesDir, '--registry', registry]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `imported ${name} ${img.manifestDigest}, pull it as ${registry}/${name}\n`);
    refs.push(`${registry}/${name}`);
  }

  // 3. A pod of each; its filesystem is the three layers with the whiteouts applied.
  for (const [i, ref] of refs.entries()) {
    const pod = `whiteouts-${i}`;
    await k('run', pod, `--image=${ref}`, '--restart=Never');
    await pollUntil(`pod ${pod} running ${ref}`, async () => ((await k('get', 'pod', pod, '-o', 'jsonpath={.status.phase}')).trim() === 'Running' ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    const exec = (...cmd: string[]) => k('exec', pod, '--', ...cmd);
    assert.equal(await exec('/bin/busybox', 'cat', '/base.txt'), 'from the lowest layer\n', 'a file of the lowest (uncompressed) layer');
    assert.equal(await exec('/bin/busybox', 'cat', '/mid.txt'), 'from the middle layer\n', 'a file of the gzip layer');
    assert.equal(await exec('/bin/sh', '-c', 'test -e /etc/gone.txt && echo present || echo absent'), 'absent\n', 'deleted by .wh.gone.txt');
    assert.equal(await exec('/bin/busybox', 'ls', '-A', '/opq'), 'new.txt\n', 'emptied by .wh..wh..opq, then only the top layer\'s entry');
    assert.equal(await exec('/bin/busybox', 'cat', '/opq/new.txt'), 'from the top layer\n', 'a file of the zstd layer');
    await k('delete', 'pod', pod, '--wait=false');
  }

  // 3b. Unmodified names through the lab registry mirror (certs.d/<upstream>/hosts.toml): an
  //     archive imported as quay.io/x/y:1 runs by that name, and `busybox` is the store's busybox.
  //     Only images the store holds are pulled, so containerd never falls back to the upstream.
  const r = await run(NODELET, ['image', 'import', dockerTar, '--tag', 'quay.io/x/y:1', '--store', imagesDir, '--registry', registry]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `imported x/y:1 ${img.manifestDigest}, pull it as ${registry}/x/y:1\n`);
  for (const [pod, ref, args, probe, want] of [
    ['mirrored-quay', 'quay.io/x/y:1', [], ['/bin/busybox', 'cat', '/base.txt'], 'from the lowest layer\n'],
    ['mirrored-busybox', 'busybox', ['--', 'sleep', '3600'], ['cat', '/etc/group'], 'root:x:0:\nnogroup:x:65534:\n'],
  ] as const) {
    await k('run', pod, `--image=${ref}`, '--restart=Never', ...args);
    await pollUntil(`pod ${pod} running ${ref}`, async () => ((await k('get', 'pod', pod, '-o', 'jsonpath={.status.phase}')).trim() === 'Running' ? true : undefined), { timeoutMs: 120_000, intervalMs: 250 });
    assert.equal(await k('exec', pod, '--', ...probe), want, `${pod} runs the store's image`);
    await k('delete', 'pod', pod, '--wait=false');
  }

  // 4. containerd's importer reads both export formats (into a namespace of its own).
  const socket = up.runtimeEndpoint.replace(/^unix:\/\//, '');
  for (const format of ['oci', 'docker']) {
    const out = join(stateDir, `export-${format}.tar`);
    const e = await run(NODELET, ['image', 'export', 'whiteouts:docker', '-o', out, '--format', format, '--store', imagesDir]);
    assert.equal(e.code, 0, e.stderr);
    const ns = `nodelet-e2e-${format}`;
    const imp = await run('ctr', ['--address', socket, '--namespace', ns, 'images', 'import', '--no-unpack', out]);
    assert.equal(imp.code, 0, imp.stderr);
    const ls = await run('ctr', ['--address', socket, '--namespace', ns, 'images', 'ls']);
    const line = ls.stdout.split('\n').find((l) => l.startsWith('docker.io/library/whiteouts:docker '));
    assert.ok(line, `ctr lists the exported image:\n${ls.stdout}`);
    // From an OCI layout ctr keeps the manifest; from a docker archive it writes its own.
    if (format === 'oci') assert.ok(line.includes(img.manifestDigest), line);
    await run('ctr', ['--address', socket, '--namespace', ns, 'images', 'rm', 'docker.io/library/whiteouts:docker']);
  }
});
