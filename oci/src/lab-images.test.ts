import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Parser } from 'tar';
import { buildImage } from './build.js';
import { ensureLabImages, LAB_BUSYBOX_LABEL, LAB_IMAGES } from './lab-images.js';
import { blobPath, listImages } from './layout.js';
import { inspectImage } from './store-images.js';

test('ensureLabImages: racing builders end with one complete store and no temp dirs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-lab-images-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Any executable stands in for the pause program: this test is about the store, not pause.
  const pause = join(dir, 'fake-pause');
  await writeFile(pause, '#!/bin/sh\nexec sleep infinity\n');
  await chmod(pause, 0o755);
  const store = join(dir, 'images');

  const results = await Promise.all([1, 2, 3].map(() => ensureLabImages(store, { pauseBinary: pause })));
  for (const r of results) {
    assert.equal(r.pause.digest, results[0]!.pause.digest);
    assert.equal(r.busybox.digest, results[0]!.busybox.digest);
  }
  assert.deepEqual((await listImages(store)).map((i) => `${i.name}:${i.tag}`), [
    `${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`,
    `${LAB_IMAGES.pause.name}:${LAB_IMAGES.pause.tag}`,
  ]);
  assert.deepEqual((await readdir(dir)).sort(), ['fake-pause', 'images'], 'no temp dirs left');

  // A second call finds the store and builds nothing.
  const again = await ensureLabImages(store, { pauseBinary: join(dir, 'does-not-exist') });
  assert.equal(again.busybox.digest, results[0]!.busybox.digest);
});

test('ensureLabImages: busybox is Debian dynamic busybox with its libraries and nsswitch.conf; a store with an older busybox is rebuilt', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-lab-images-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const pause = join(dir, 'fake-pause');
  await writeFile(pause, '#!/bin/sh\nexec sleep infinity\n');
  await chmod(pause, 0o755);
  const store = join(dir, 'images');
  // An older store: busybox built as before (a static binary, no label). It must not be kept.
  await buildImage({ store, ...LAB_IMAGES.pause, files: [{ from: pause, to: '/pause' }] });
  await buildImage({ store, ...LAB_IMAGES.busybox, files: [{ from: pause, to: '/bin/busybox' }], config: { cmd: ['sh'] } });

  const r = await ensureLabImages(store, { pauseBinary: pause });
  const img = await inspectImage(store, LAB_IMAGES.busybox);
  assert.equal(img.digest, r.busybox.digest);
  assert.equal(img.config?.config?.Labels?.[LAB_BUSYBOX_LABEL], 'busybox-dynamic-1');
  const layers = (img.manifest as { layers: { digest: string }[] }).layers;
  assert.equal(layers.length, 1);
  const paths: string[] = [];
  await pipeline(createReadStream(blobPath(store, layers[0]!.digest)), new Parser({ onReadEntry: (e) => { paths.push(e.path); e.resume(); } }));
  for (const p of ['bin/busybox', 'bin/wget', 'bin/nslookup', 'bin/nc', 'etc/nsswitch.conf', 'etc/passwd', 'lib64/ld-linux-x86-64.so.2']) assert.ok(paths.includes(p), `${p} in the layer`);
  assert.ok(paths.some((p) => /^lib\/x86_64-linux-gnu\/libc\.so\.6$|^usr\/lib\/.*libc\.so\.6$/.test(p)), 'libc.so.6 in the layer');
});
