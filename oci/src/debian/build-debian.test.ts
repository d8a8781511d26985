import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { Parser } from 'tar';
import { blobPath } from '../layout.js';
import { inspectImage } from '../store-images.js';
import { debFileName, resolvePackages, validatePackageName } from './apt.js';
import { buildDebianImage, DEFAULT_DEB_CACHE } from './build-debian.js';

test('resolvePackages: the closure for an empty system, in install order, with versions and architectures', async () => {
  const pkgs = await resolvePackages(['nginx']);
  const names = pkgs.map((p) => p.name);
  assert.ok(names.includes('nginx') && names.includes('nginx-common') && names.includes('libc6'), names.join(' '));
  assert.ok(names.indexOf('libc6') < names.indexOf('nginx'), 'dependencies first');
  assert.equal(pkgs.find((p) => p.name === 'nginx-common')?.arch, 'all');
  await assert.rejects(resolvePackages(['no-such-package-nodelet']), /"no-such-package-nodelet" is not in this machine's package lists/);
});

test('package names are checked before they reach apt; .deb names escape the epoch colon as apt does', () => {
  assert.throws(() => validatePackageName('-o=Dir::Etc=/tmp'), /not a Debian package name/);
  assert.throws(() => validatePackageName('Nginx'), /not a Debian package name/);
  assert.equal(validatePackageName('libstdc++6'), 'libstdc++6');
  assert.equal(debFileName({ name: 'busybox', version: '1:1.35.0-4', arch: 'amd64' }), 'busybox_1%3a1.35.0-4_amd64.deb');
});

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
