import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile, mkdir, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { list } from 'tar';
import { hasCode } from '@nodelet/base';
import { buildImage, type BuildImageOptions } from './build.js';
import { blobPath, listImages } from './layout.js';
import type { ImageConfig, ImageManifest } from './media-types.js';

async function fixture(t: { after(fn: () => Promise<void>): void }): Promise<{ dir: string; src: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-build-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const src = join(dir, 'src');
  await mkdir(join(src, 'www', 'sub'), { recursive: true });
  await writeFile(join(src, 'hello.sh'), '#!/bin/sh\necho hello\n');
  await writeFile(join(src, 'www', 'index.html'), '<p>hi</p>\n');
  await writeFile(join(src, 'www', 'sub', 'b.txt'), 'b\n');
  await writeFile(join(src, 'www', 'a.txt'), 'a\n');
  await chmod(join(src, 'www'), 0o755);
  await chmod(join(src, 'www', 'sub'), 0o755);
  return { dir, src };
}

function spec(store: string, src: string): BuildImageOptions {
  return {
    store,
    name: 'lab/hello',
    tag: 'v1',
    files: [{ from: join(src, 'hello.sh'), to: '/usr/local/bin/hello', mode: 0o755 }],
    dirs: [{ from: join(src, 'www'), to: '/var/www' }],
    symlinks: [{ to: '/bin/hi', target: '/usr/local/bin/hello' }],
    config: { entrypoint: ['/usr/local/bin/hello'], cmd: ['--loud'], env: ['A=1'], workingDir: '/var/www' },
  };
}

test('same input gives the same digests, regardless of source mtimes and umask', async (t) => {
  const { dir, src } = await fixture(t);
  const a = await buildImage(spec(join(dir, 'store-a'), src));
  await utimes(join(src, 'hello.sh'), new Date(2001, 1, 1), new Date(2001, 1, 1));
  await utimes(join(src, 'www', 'a.txt'), new Date(), new Date());
  const oldMask = process.umask(0o077);
  let b;
  try {
    b = await buildImage(spec(join(dir, 'store-b'), src));
  } finally {
    process.umask(oldMask);
  }
  assert.equal(b.manifest.digest, a.manifest.digest);
  assert.equal(b.layers[0]!.digest, a.layers[0]!.digest);
  assert.equal(b.config.digest, a.config.digest);
});

interface Member {
  path: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
  mtime: number;
  size: number;
  linkpath?: string;
}

/** The members of a tar file as the `tar` package parses them, raw header fields included. */
async function members(file: string): Promise<Member[]> {
  const out: Member[] = [];
  await list({
    file,
    strict: true,
    onReadEntry: (e) => {
      const h = e.header;
      out.push({ path: e.path, type: e.type, mode: h.mode!, uid: h.uid!, gid: h.gid!, uname: h.uname!, gname: h.gname!, mtime: h.mtime!.getTime(), size: e.size, ...(e.linkpath ? { linkpath: e.linkpath } : {}) });
    },
  });
  return out;
}

test('writes a tar layer with sorted entries, root owner and mtime 0, and a matching config', async (t) => {
  const { dir, src } = await fixture(t);
  const store = join(dir, 'store');
  const built = await buildImage(spec(store, src));
  const layerFile = blobPath(store, built.layers[0]!.digest);
  const base = { uid: 0, gid: 0, uname: '', gname: '', mtime: 0 };
  const dir755 = (path: string): Member => ({ path, type: 'Directory', mode: 0o755, size: 0, ...base });
  assert.deepEqual(await members(layerFile), [
    { path: 'bin/', type: 'Directory', mode: 0o755, size: 0, ...base },
    { path: 'bin/hi', type: 'SymbolicLink', mode: 0o777, size: 0, linkpath: '/usr/local/bin/hello', ...base },
    dir755('usr/'),
    dir755('usr/local/'),
    dir755('usr/local/bin/'),
    { path: 'usr/local/bin/hello', type: 'File', mode: 0o755, size: 21, ...base },
    dir755('var/'),
    dir755('var/www/'),
    { path: 'var/www/a.txt', type: 'File', mode: 0o644, size: 2, ...base },
    { path: 'var/www/index.html', type: 'File', mode: 0o644, size: 10, ...base },
    dir755('var/www/sub/'),
    { path: 'var/www/sub/b.txt', type: 'File', mode: 0o644, size: 2, ...base },
  ]);
  // Portable headers: ustar magic in every header block, no GNU extensions.
  const raw = await readFile(layerFile);
  assert.equal(raw.subarray(257, 265).toString('latin1'), 'ustar\u000000');
  assert.equal(raw.length % 512, 0);
  // Another implementation reads it the same way (GNU tar is installed for other tests).
  const listing = execFileSync('tar', ['--list', '--verbose', '--numeric-owner', '--file', layerFile], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(listing.length, 12);
  for (const l of listing) assert.match(l, /^\S+ 0\/0 .* 1970-01-01 00:00 /, l);

  const manifest = JSON.parse(await readFile(blobPath(store, built.manifest.digest), 'utf8')) as ImageManifest;
  assert.equal(manifest.mediaType, 'application/vnd.oci.image.manifest.v1+json');
  assert.equal(manifest.layers[0]!.mediaType, 'application/vnd.oci.image.layer.v1.tar');
  const config = JSON.parse(await readFile(blobPath(store, manifest.config.digest), 'utf8')) as ImageConfig;
  assert.deepEqual(config.rootfs.diff_ids, [built.layers[0]!.digest]);
  assert.equal(config.os, 'linux');
  assert.deepEqual(config.config, { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'A=1'], Entrypoint: ['/usr/local/bin/hello'], Cmd: ['--loud'], WorkingDir: '/var/www' });
  assert.deepEqual(await listImages(store), [{ name: 'lab/hello', tag: 'v1', digest: built.manifest.digest, mediaType: built.manifest.mediaType, size: built.manifest.size }]);
});

test('rebuilding a tag replaces it; other tags stay', async (t) => {
  const { dir, src } = await fixture(t);
  const store = join(dir, 'store');
  await buildImage(spec(store, src));
  await buildImage({ ...spec(store, src), tag: 'v2' });
  const changed = await buildImage({ ...spec(store, src), config: { cmd: ['other'] } });
  const images = await listImages(store);
  assert.deepEqual(images.map((i) => `${i.name}:${i.tag}`), ['lab/hello:v1', 'lab/hello:v2']);
  assert.equal(images[0]!.digest, changed.manifest.digest);
  assert.notEqual(images[1]!.digest, changed.manifest.digest);
});

test('rejects bad names, tags, paths and missing sources with ERR_INVALID_ARGUMENT', async (t) => {
  const { dir, src } = await fixture(t);
  const store = join(dir, 'store');
  const bad: [Partial<BuildImageOptions>, RegExp][] = [
    [{ name: 'Hello' }, /invalid repository name "Hello"/],
    [{ tag: '-x' }, /invalid tag "-x"/],
    [{ files: [{ from: join(src, 'hello.sh'), to: 'relative' }] }, /image path "relative" must be absolute/],
    [{ files: [{ from: join(src, 'hello.sh'), to: '/' }] }, /not a file path inside the image/],
    [{ files: [{ from: join(src, 'missing'), to: '/x' }] }, /cannot read ".*missing"/],
  ];
  for (const [override, want] of bad) {
    await assert.rejects(buildImage({ ...spec(store, src), ...override }), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && want.test(err.message));
  }
});

test('base images: layers stacked, config inherited and merged, blobs copied from another store', async (t) => {
  const { dir, src } = await fixture(t);
  const baseStore = join(dir, 'base-store');
  const base = await buildImage({
    store: baseStore,
    name: 'base',
    tag: '1',
    files: [{ from: join(src, 'hello.sh'), to: '/bin/hello', mode: 0o755 }],
    config: { cmd: ['hello'], env: ['A=1', 'B=2'], workingDir: '/srv', labels: { tier: 'base' } },
  });
  const store = join(dir, 'store');
  const child = await buildImage({
    store,
    name: 'child',
    tag: '1',
    base: { name: 'base', tag: '1', store: baseStore },
    dirs: [{ from: join(src, 'www'), to: '/var/www' }],
    config: { env: ['B=3', 'C=4'], labels: { app: 'web' } },
  });
  assert.deepEqual(child.layers.map((l) => l.digest), [base.layers[0]!.digest, child.layers[1]!.digest]);
  for (const l of child.layers) assert.ok(existsSync(blobPath(store, l.digest)), `layer ${l.digest} copied into the target store`);
  const config = JSON.parse(await readFile(blobPath(store, child.config.digest), 'utf8')) as ImageConfig;
  assert.deepEqual(config.rootfs.diff_ids, child.layers.map((l) => l.digest));
  assert.deepEqual(config.config, {
    Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'A=1', 'B=3', 'C=4'],
    Cmd: ['hello'],
    WorkingDir: '/srv',
    Labels: { tier: 'base', app: 'web' },
  });
  assert.equal(config.history?.length, 2);

  // A new entrypoint drops the inherited Cmd.
  const ep = await buildImage({ store, name: 'child', tag: '2', base: { name: 'base', tag: '1', store: baseStore }, config: { entrypoint: ['/bin/hello'] } });
  const epConfig = JSON.parse(await readFile(blobPath(store, ep.config.digest), 'utf8')) as ImageConfig;
  assert.deepEqual([epConfig.config.Entrypoint, epConfig.config.Cmd], [['/bin/hello'], undefined]);

  await assert.rejects(buildImage({ store, name: 'x', tag: '1', base: { name: 'nope', tag: '1' } }), (err: Error) => hasCode(err, 'ERR_NOT_FOUND') && /base image "nope:1" is not in store/.test(err.message));
});

test('exposed ports and stop signal land in the config; malformed ones are refused', async (t) => {
  const { dir, src } = await fixture(t);
  const store = join(dir, 'store');
  const built = await buildImage({ ...spec(store, src), config: { exposedPorts: ['80/tcp', '53/udp'], stopSignal: 'SIGQUIT' } });
  const config = JSON.parse(await readFile(blobPath(store, built.config.digest), 'utf8')) as ImageConfig;
  assert.deepEqual(config.config?.ExposedPorts, { '80/tcp': {}, '53/udp': {} });
  assert.equal(config.config?.StopSignal, 'SIGQUIT');
  await assert.rejects(buildImage({ ...spec(store, src), config: { exposedPorts: ['http'] } }), (e: unknown) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /exposed port "http"/.test((e as Error).message));
  await assert.rejects(buildImage({ ...spec(store, src), config: { stopSignal: 'quit now' } }), /stop signal "quit now"/);
});
