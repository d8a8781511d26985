import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { hasCode } from '@nodelet/base';
import { blobPath, listImages } from '../layout.js';
import { hostArchitecture, type ImageManifest } from '../media-types.js';
import { dockerArchiveFiles, legacyDockerArchiveFiles, imageVariant, ociArchiveFiles, sha256, type TestImage, whiteoutImage, writeTarArchive } from '../testing/archives.js';
import { exportImagesToFile } from './export.js';
import { importImages } from './import.js';

let cached: TestImage | undefined;
const image = async (): Promise<TestImage> => (cached ??= await whiteoutImage());

async function tmp(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-import-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file of a store with a hash of its bytes: equal snapshots mean an unchanged store. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    out[relative(root, p)] = e.isFile() ? createHash('sha256').update(await readFile(p)).digest('hex') : 'dir';
  }
  return out;
}

async function manifestOf(store: string, digest: string): Promise<ImageManifest> {
  return JSON.parse(await readFile(blobPath(store, digest), 'utf8')) as ImageManifest;
}

test('an OCI layout archive: three layers (tar, gzip, zstd) kept byte-for-byte, manifest verbatim, names from io.containerd.image.name', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const archive = join(dir, 'oci.tar');
  await writeTarArchive(archive, ociArchiveFiles([{ image: img, names: ['docker.io/library/wh:v1', 'ghcr.io/acme/tools/wh:v2'] }]));
  const store = join(dir, 'store');
  const got = await importImages(archive, { store });
  assert.deepEqual(got.map((g) => [g.name, g.tag, g.manifest.digest, g.format]), [
    ['wh', 'v1', img.manifestDigest, 'oci'],
    ['acme/tools/wh', 'v2', img.manifestDigest, 'oci'],
  ]);
  assert.deepEqual((await listImages(store)).map((i) => `${i.name}:${i.tag}`), ['acme/tools/wh:v2', 'wh:v1']);
  assert.deepEqual(await readFile(blobPath(store, img.manifestDigest)), img.manifest);
  const m = await manifestOf(store, img.manifestDigest);
  assert.deepEqual(m.layers.map((l) => l.mediaType), ['application/vnd.oci.image.layer.v1.tar', 'application/vnd.oci.image.layer.v1.tar+gzip', 'application/vnd.oci.image.layer.v1.tar+zstd']);
  for (const l of img.layers) assert.deepEqual(await readFile(blobPath(store, l.digest)), l.blob, `layer ${l.digest} is stored as it came (whiteouts included)`);
  assert.deepEqual(await readdir(store), ['blobs', 'index.json', 'oci-layout'], 'no staging directory or lock left');
});

test('a docker save archive (Docker 25 layout) becomes an OCI manifest with media types from the layer bytes', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const archive = join(dir, 'docker.tar');
  await writeTarArchive(archive, dockerArchiveFiles([{ image: img, repoTags: ['wh:v1', 'localhost:5000/lab/wh:v1'] }]));
  const store = join(dir, 'store');
  const got = await importImages(archive, { store });
  assert.deepEqual(got.map((g) => [g.name, g.tag, g.format]), [['wh', 'v1', 'docker'], ['lab/wh', 'v1', 'docker']]);
  // The manifest written for it is the one the OCI form of the same image carries.
  assert.equal(got[0]!.manifest.digest, img.manifestDigest);
  assert.deepEqual(await readFile(blobPath(store, img.configDigest)), img.config);
});

test('a legacy docker save archive: <id>/layer.tar files, a symlinked layer, <hex>.json config', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const archive = join(dir, 'legacy.tar');
  await writeTarArchive(archive, legacyDockerArchiveFiles(img, ['wh:legacy']));
  const store = join(dir, 'store');
  const [got] = await importImages(archive, { store });
  const m = await manifestOf(store, got!.manifest.digest);
  assert.deepEqual(m.layers.map((l) => [l.mediaType, l.digest]), img.layers.map((l) => ['application/vnd.oci.image.layer.v1.tar', l.diffId]));
  for (const l of img.layers) assert.deepEqual(await readFile(blobPath(store, l.diffId)), l.tar);
});

test('export → import round trips in both formats; the same images export to the same bytes', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const archive = join(dir, 'in.tar');
  await writeTarArchive(archive, ociArchiveFiles([{ image: img, names: ['wh:v1'] }]));
  const store = join(dir, 'store');
  await importImages(archive, { store });

  for (const format of ['oci', 'docker'] as const) {
    const out = join(dir, `out-${format}.tar`);
    await exportImagesToFile(out, { store, images: [{ name: 'wh', tag: 'v1' }], format });
    const again = join(dir, `out-${format}-again.tar`);
    await exportImagesToFile(again, { store, images: [{ name: 'wh', tag: 'v1' }], format });
    assert.deepEqual(await readFile(again), await readFile(out), `${format} export is deterministic`);
    const store2 = join(dir, `store-${format}`);
    const [back] = await importImages(out, { store: store2 });
    assert.deepEqual([back!.name, back!.tag, back!.manifest.digest, back!.format], ['wh', 'v1', img.manifestDigest, format]);
    for (const l of img.layers) assert.deepEqual(await readFile(blobPath(store2, l.digest)), l.blob);
  }
  await assert.rejects(exportImagesToFile(join(dir, 'x.tar'), { store, images: [{ name: 'nope', tag: 'v1' }] }), (err: Error) => hasCode(err, 'ERR_NOT_FOUND'));
  assert.equal(existsSync(join(dir, 'x.tar')), false);
});

test('a corrupt archive is refused with a clear error and leaves the store as it was', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const store = join(dir, 'store');
  const good = join(dir, 'good.tar');
  await writeTarArchive(good, ociArchiveFiles([{ image: img, names: ['wh:v1'] }]));
  await importImages(good, { store });
  const before = await snapshot(store);

  const flipped = (b: Buffer): Buffer => {
    const c = Buffer.from(b);
    c[c.length >> 1]! ^= 0xff;
    return c;
  };
  const cases: [string, () => Promise<void>, RegExp][] = [];
  // A layer whose bytes no longer match its name (blobs/sha256/<hex>).
  cases.push(['oci-flipped-layer', async () => {
    const files = ociArchiveFiles([{ image: img, names: ['wh:v2'] }]);
    const p = `blobs/sha256/${img.layers[1]!.digest.slice(7)}`;
    files.set(p, flipped(files.get(p) as Buffer));
    await writeTarArchive(join(dir, 'c.tar'), files);
  }, /member "blobs\/sha256\/[a-f0-9]{64}" hashes to sha256:[a-f0-9]{64}, not to its name/]);
  // A docker save whose uncompressed layer does not match the config's diff_id.
  cases.push(['docker-bad-diff-id', async () => {
    const files = legacyDockerArchiveFiles(img, ['wh:v2']);
    const first = [...files.keys()].find((k) => k.endsWith('/layer.tar'))!;
    files.set(first, flipped(files.get(first) as Buffer));
    await writeTarArchive(join(dir, 'c.tar'), files);
  }, /layer ".*\/layer.tar" of image 0 of manifest.json unpacks to sha256:[a-f0-9]{64}, but the image config's diff_id is/]);
  // A manifest naming a layer the archive lacks.
  cases.push(['oci-missing-layer', async () => {
    const files = ociArchiveFiles([{ image: img, names: ['wh:v2'] }]);
    files.delete(`blobs/sha256/${img.layers[2]!.digest.slice(7)}`);
    await writeTarArchive(join(dir, 'c.tar'), files);
  }, /layer 2 \(sha256:[a-f0-9]{64}\) of manifest sha256:[a-f0-9]{64} is not in the archive/]);
  // Not a tar at all.
  cases.push(['garbage', () => writeFile(join(dir, 'c.tar'), Buffer.alloc(4096, 7)), /is not a readable tar archive|is not an image archive/]);

  for (const [name, make, want] of cases) {
    await make();
    await assert.rejects(importImages(join(dir, 'c.tar'), { store }), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && want.test(err.message), name);
    assert.deepEqual(await snapshot(store), before, `${name}: the store is unchanged`);
  }
  // A store the failed import would have created is not left behind.
  await assert.rejects(importImages(join(dir, 'c.tar'), { store: join(dir, 'fresh') }));
  assert.equal(existsSync(join(dir, 'fresh')), false);
});

test('--tag names the single image of an archive; untagged images and ambiguous --tag are refused', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const store = join(dir, 'store');
  const untagged = join(dir, 'untagged.tar');
  await writeTarArchive(untagged, dockerArchiveFiles([{ image: img, repoTags: [] }]));
  await assert.rejects(importImages(untagged, { store }), /has no tag .*name it with --tag NAME:TAG/);
  const got = await importImages(untagged, { store, tags: ['docker.io/lab/a:1', 'b:2'] });
  assert.deepEqual(got.map((g) => `${g.name}:${g.tag}`), ['lab/a:1', 'b:2']);

  const two = join(dir, 'two.tar');
  await writeTarArchive(two, ociArchiveFiles([{ image: img, names: ['x:1'] }, { image: imageVariant(img), names: ['y:1'] }]));
  await assert.rejects(importImages(two, { store, tags: ['z:1'] }), /holds 2 images; --tag names one image only/);
  assert.deepEqual((await importImages(two, { store })).map((g) => `${g.name}:${g.tag}`), ['x:1', 'y:1']);
  await assert.rejects(importImages(two, { store, tags: ['bad tag'] }), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /invalid image reference "bad tag"/.test(err.message));
});

test('a multi-platform index is narrowed to the manifest of this platform the archive holds; a gzipped archive is read too', async (t) => {
  const dir = await tmp(t);
  const img = await image();
  const files = ociArchiveFiles([{ image: img, names: [] }]);
  // An index naming this platform's manifest (present) and another platform's (absent, as
  // `ctr images export --platform` leaves it).
  const index = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: `sha256:${'e'.repeat(64)}`, size: 10, platform: { os: 'linux', architecture: 'other' } },
      { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: img.manifestDigest, size: img.manifest.length, platform: { os: 'linux', architecture: hostArchitecture() } },
    ],
  }));
  files.set(`blobs/sha256/${sha256(index).slice(7)}`, index);
  files.set('index.json', Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.index.v1+json', digest: sha256(index), size: index.length, annotations: { 'io.containerd.image.name': 'docker.io/library/multi:1' } }] })));
  const plain = join(dir, 'multi.tar');
  await writeTarArchive(plain, files);
  const gz = join(dir, 'multi.tar.gz');
  await writeFile(gz, gzipSync(await readFile(plain)));
  const store = join(dir, 'store');
  const [got] = await importImages(gz, { store });
  assert.deepEqual([got!.name, got!.tag, got!.manifest.digest], ['multi', '1', img.manifestDigest]);
  assert.equal(existsSync(blobPath(store, sha256(index))), false, 'the index itself is not kept');

  // Only the absent platform: refused.
  const other = JSON.parse(index.toString()) as { manifests: unknown[] };
  other.manifests = other.manifests.slice(0, 1);
  const otherBytes = Buffer.from(JSON.stringify(other));
  files.set(`blobs/sha256/${sha256(otherBytes).slice(7)}`, otherBytes);
  files.set('index.json', Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.index.v1+json', digest: sha256(otherBytes), size: otherBytes.length, annotations: { 'io.containerd.image.name': 'multi:2' } }] })));
  await writeTarArchive(plain, files);
  await assert.rejects(importImages(plain, { store }), /is a multi-platform index, and the archive holds none of its linux image manifests/);
});
