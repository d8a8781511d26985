import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_BUSYBOX, ensureLabImages, LAB_IMAGES } from './lab-images.js';
import { listImages } from './layout.js';

test('ensureLabImages: racing builders end with one complete store and no temp dirs', async (t) => {
  if (!existsSync(DEFAULT_BUSYBOX)) return t.skip(`${DEFAULT_BUSYBOX} missing (apt-get install busybox-static)`);
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
