// A Debian image built twice from this machine's apt lists and .deb cache: nginx's config, its
// layer's contents, and the same digest both times. Two full image builds take longer than the unit
// runner's bound on a whole file (--test-timeout, 60 s, applies to each file's process as well as to
// each test, so a unit test's own longer timeout cannot lift it): they run here, where a file has 10 min.
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { Parser } from 'tar';
import { blobPath } from '../../src/layout.js';
import { inspectImage } from '../../src/store-images.js';
import { buildDebianImage, DEFAULT_DEB_CACHE } from '../../src/debian/build-debian.js';

test('buildDebianImage nginx: the welcome page, the enabled default site and nginx\'s config; the same digest twice', { timeout: 300_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-debian-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const a = await buildDebianImage({ store: join(dir, 'a'), name: 'nginx', tag: 'latest', packages: ['nginx'], cacheDir: DEFAULT_DEB_CACHE });
  const b = await buildDebianImage({ store: join(dir, 'b'), name: 'nginx', tag: 'latest', packages: ['nginx'], cacheDir: DEFAULT_DEB_CACHE });
  assert.equal(a.manifest.digest, b.manifest.digest, 'deterministic');
  assert.ok(a.installed.some((p) => p.name === 'base-passwd') && a.installed.some((p) => p.name === 'dash'));

  const img = await inspectImage(join(dir, 'a'), { name: 'nginx', tag: 'latest' });
  const c = img.config!.config!;
  assert.deepEqual(c.Entrypoint, ['nginx', '-g', 'daemon off;']);
  assert.deepEqual(c.ExposedPorts, { '80/tcp': {} });
  assert.equal(c.StopSignal, 'SIGQUIT');
  assert.match(c.Labels?.['org.nodelet.debian.packages'] ?? '', /^nginx=1\./);

  const entries = new Map<string, { type: string; linkpath?: string }>();
  await pipeline(createReadStream(blobPath(join(dir, 'a'), a.layers[0]!.digest)), new Parser({ onReadEntry: (e) => { entries.set(e.path.replace(/\/$/, ''), { type: e.type, linkpath: e.linkpath }); e.resume(); } }));
  for (const p of ['usr/sbin/nginx', 'var/www/html/index.nginx-debian.html', 'etc/passwd', 'etc/nsswitch.conf', 'bin/sh']) assert.ok(entries.has(p), `${p} in the layer`);
  assert.equal(entries.get('etc/nginx/sites-enabled/default')?.linkpath, '/etc/nginx/sites-available/default');
  assert.equal(entries.get('var/log/nginx/access.log')?.linkpath, '/dev/stdout');
});
