import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { importImages } from './archive/import.js';
import { blobPath, listImages, readIndex, writeIndex } from './layout.js';
import { removeImages, inspectImage } from './store-images.js';
import { imageVariant, ociArchiveFiles, whiteoutImage, writeTarArchive } from './testing/archives.js';

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-store-images-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const a = await whiteoutImage();
  const b = imageVariant(a);
  const archive = join(dir, 'in.tar');
  await writeTarArchive(archive, ociArchiveFiles([{ image: a, names: ['a:1', 'a:2'] }, { image: b, names: ['b:1'] }]));
  const store = join(dir, 'store');
  await importImages(archive, { store });
  return { dir, store, a, b };
}

const blobs = async (store: string): Promise<string[]> => (await readdir(join(store, 'blobs', 'sha256'))).map((h) => `sha256:${h}`).sort();

test('rm untags, and deletes only the blobs no remaining tag references', async (t) => {
  const { store, a, b } = await setup(t);
  const layers = a.layers.map((l) => l.digest);
  assert.deepEqual(await blobs(store), [a.manifestDigest, a.configDigest, b.manifestDigest, b.configDigest, ...layers].sort());

  // a:2 still points at a's manifest: nothing to delete.
  assert.deepEqual(await removeImages(store, [{ name: 'a', tag: '1' }]), { untagged: [{ name: 'a', tag: '1' }], deleted: [] });
  // The last tag of a goes: its manifest and config go; the layers b shares stay.
  const r = await removeImages(store, [{ name: 'a', tag: '2' }]);
  assert.deepEqual(r.deleted.map((d) => d.digest), [a.manifestDigest, a.configDigest].sort());
  assert.deepEqual(r.deleted.find((d) => d.digest === a.configDigest)?.size, a.config.length);
  assert.deepEqual(await blobs(store), [b.manifestDigest, b.configDigest, ...layers].sort());
  assert.deepEqual((await listImages(store)).map((i) => `${i.name}:${i.tag}`), ['b:1']);
  for (const l of a.layers) assert.deepEqual(await readFile(blobPath(store, l.digest)), l.blob);

  // Unknown names are refused before anything changes.
  await assert.rejects(removeImages(store, [{ name: 'b', tag: '1' }, { name: 'nope', tag: '1' }]), (err: Error) => hasCode(err, 'ERR_NOT_FOUND') && /"nope:1" is not in store/.test(err.message));
  assert.deepEqual((await listImages(store)).map((i) => `${i.name}:${i.tag}`), ['b:1']);

  // The last image: everything goes, leftovers of interrupted writes too.
  await mkdir(join(store, '.nodelet-import-stale'));
  await writeFile(join(store, 'blobs', 'sha256', '.tmp-abc'), 'partial');
  await removeImages(store, [{ name: 'b', tag: '1' }]);
  assert.deepEqual(await readdir(join(store, 'blobs', 'sha256')), []);
  assert.deepEqual((await readdir(store)).sort(), ['blobs', 'index.json', 'oci-layout']);
});

test('rm keeps what an untagged index entry references', async (t) => {
  const { store, a, b } = await setup(t);
  const index = await readIndex(store);
  // An entry without a name (added by another tool) keeps a's manifest and everything under it.
  index.manifests.push({ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: a.manifestDigest, size: a.manifest.length });
  await writeIndex(store, index);
  await removeImages(store, [{ name: 'a', tag: '1' }, { name: 'a', tag: '2' }, { name: 'b', tag: '1' }]);
  assert.deepEqual(await blobs(store), [a.manifestDigest, a.configDigest, ...a.layers.map((l) => l.digest)].sort());
  assert.equal(existsSync(blobPath(store, b.configDigest)), false);
});

test('inspect: manifest and config of a tag', async (t) => {
  const { store, a } = await setup(t);
  const got = await inspectImage(store, { name: 'a', tag: '1' });
  assert.equal(got.digest, a.manifestDigest);
  assert.deepEqual(got.manifest, JSON.parse(a.manifest.toString()));
  assert.deepEqual(got.config, JSON.parse(a.config.toString()));
  await assert.rejects(inspectImage(store, { name: 'a', tag: '9' }), (err: Error) => hasCode(err, 'ERR_NOT_FOUND'));
});
