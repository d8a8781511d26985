// Registry mirrors on real containerd: with the lab's certs.d/<upstream>/hosts.toml files, CRI
// PullImage of unmodified names (`busybox`, `docker.io/library/busybox`, an imported
// `quay.io/x/y:1`) is answered by our registry from its store. The upstream servers in those
// hosts.toml files are a closed loopback port, so no pull can fall back to the internet. An alias
// of the registry (a lab on a node network serves it off 127.0.0.1:5000, which manifests still
// name) pulls through it too, keeping the name it was asked by.
// (Test-only use of @nodelet/cri-client: lab-runtime itself never speaks gRPC.)
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCriClient } from '@nodelet/cri-client';
import { containerdPaths, writeAliasHosts, writeMirrorHosts } from '@nodelet/lab-runtime';
import { requireRoot, startTestRuntime } from '@nodelet/lab-runtime/testing';
import { DEFAULT_LAB_IMAGE_DIR, importImages, LAB_IMAGES, resolveTag, startRegistry } from '@nodelet/oci';
import { dockerArchiveFiles, whiteoutImage, writeTarArchive } from '@nodelet/oci/testing';
import { cleanups } from '@nodelet/base/testing';

const BRIDGE = { name: 'nlb-mirror', subnet: '10.232.9.0/24' };
/** Nothing listens on the discard port of loopback: a fallback to "upstream" is refused at once. */
const NO_UPSTREAM = 'http://127.0.0.1:9';

test('containerd pulls busybox, docker.io/library/busybox, an imported quay.io/x/y:1 and an alias of the registry through the lab registry mirror', { timeout: 120_000 }, async (t) => {
  const cleanup = cleanups(t);
  if (!requireRoot(t)) return;
  const work = await mkdtemp(join(tmpdir(), 'nodelet-mirror-'));
  cleanup(() => rm(work, { recursive: true, force: true }));
  const rt = await startTestRuntime({ name: 'mirror', bridge: BRIDGE });
  cleanup(() => rt.stop());

  // A private store: the lab images plus a `docker save` archive of quay.io/x/y:1, imported.
  const store = join(work, 'store');
  await cp(DEFAULT_LAB_IMAGE_DIR, store, { recursive: true });
  const archive = join(work, 'xy.tar');
  await writeTarArchive(archive, dockerArchiveFiles([{ image: await whiteoutImage(), repoTags: ['quay.io/x/y:1'] }]));
  const [imported] = await importImages(archive, { store });
  assert.deepEqual([imported!.name, imported!.tag], ['x/y', '1'], 'the store name drops the host');
  const reg = await startRegistry({ root: store });
  cleanup(() => reg.close());

  // The lab's mirror files, in the certs.d this containerd reads (config_path, re-read per pull).
  await writeMirrorHosts(containerdPaths(rt.dir).certsDir, reg.hostPort, NO_UPSTREAM);
  // The alias's own server is the closed discard port too: only the mirror can answer it.
  const alias = NO_UPSTREAM.slice('http://'.length);
  await writeAliasHosts(containerdPaths(rt.dir).certsDir, reg.hostPort, [alias, reg.hostPort]);

  const cri = createCriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  cleanup(() => cri.close());
  const busybox = (await resolveTag(store, LAB_IMAGES.busybox.name, LAB_IMAGES.busybox.tag))!;
  const cases: [string, string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest', busybox.digest],
    ['docker.io/library/busybox:latest', 'docker.io/library/busybox:latest', busybox.digest],
    ['quay.io/x/y:1', 'quay.io/x/y:1', imported!.manifest.digest],
    [`${alias}/busybox:latest`, `${alias}/busybox:latest`, busybox.digest],
  ];
  for (const [name, tagged, digest] of cases) {
    const { imageRef } = await cri.image.pullImage({ image: { image: name } });
    const { image } = await cri.image.imageStatus({ image: { image: imageRef } });
    assert.ok(image?.repoTags.includes(tagged), `${name}: tagged ${tagged}: ${image?.repoTags.join(', ')}`);
    assert.ok(image?.repoDigests.some((d) => d.endsWith(`@${digest}`)), `${name}: the store's manifest ${digest}: ${image?.repoDigests.join(', ')}`);
  }

  // A name the store lacks fails (mirror 404, then the closed loopback "upstream"): nothing leaves the machine.
  await assert.rejects(cri.image.pullImage({ image: { image: 'quay.io/x/missing:1' } }));
});
