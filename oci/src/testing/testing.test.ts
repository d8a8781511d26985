import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { startTestRegistry, tinyImageStore } from './index.js';
import { startRegistry } from '../registry.js';

test('startTestRegistry serves the lab images', async (t) => {
  if (!existsSync('/bin/busybox')) return t.skip('/bin/busybox missing (apt-get install busybox-static)');
  const reg = await startTestRegistry();
  t.after(() => reg.close());
  assert.match(reg.images.busybox, /^127\.0\.0\.1:\d+\/busybox:latest$/);
  const res = await fetch(`${reg.url}/v2/pause/manifests/3.9`, { method: 'HEAD' });
  assert.equal(res.status, 200);
});

test('tinyImageStore makes a servable one-image store', async (t) => {
  const s = await tinyImageStore('a/b', 't1', 'xyz');
  t.after(() => s.remove());
  const reg = await startRegistry({ root: s.dir });
  t.after(() => reg.close());
  const blob = await fetch(`${reg.url}/v2/a/b/blobs/${s.layerDigest}`);
  assert.equal(await blob.text(), 'xyz');
  const m = await fetch(`${reg.url}/v2/a/b/manifests/t1`, { method: 'HEAD' });
  assert.equal(m.headers.get('docker-content-digest'), s.manifestDigest);
});
