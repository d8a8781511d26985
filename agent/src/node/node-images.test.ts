import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_NAMES_PER_IMAGE_IN_NODE_STATUS, nodeStatusImages, type ListedImage } from './node-images.js';

const img = (id: string, size: number, repoTags: string[] = [`r/${id}:1`], repoDigests: string[] = [`r/${id}@sha256:${id}`]): ListedImage => ({ id, size: String(size), repoTags, repoDigests });

test('status.images: largest first, equal sizes by image ID descending, whatever order the runtime lists them in', () => {
  const list = [img('a', 10), img('b', 300), img('c', 20), img('d', 20)];
  const want = [
    { names: ['r/b@sha256:b', 'r/b:1'], sizeBytes: 300 },
    { names: ['r/d@sha256:d', 'r/d:1'], sizeBytes: 20 },
    { names: ['r/c@sha256:c', 'r/c:1'], sizeBytes: 20 },
    { names: ['r/a@sha256:a', 'r/a:1'], sizeBytes: 10 },
  ];
  assert.deepEqual(nodeStatusImages(list, 50), want);
  assert.deepEqual(nodeStatusImages([...list].reverse(), 50), want, 'the same list in another order gives the same status');
  assert.deepEqual(list.map((i) => i.id), ['a', 'b', 'c', 'd'], 'the input is left as it was');
});

test('status.images: at most nodeStatusMaxImages, the largest kept; -1 keeps every image, 0 none', () => {
  const list = Array.from({ length: 60 }, (_, i) => img(`i${String(i).padStart(2, '0')}`, (i + 1) * 1000));
  const capped = nodeStatusImages(list, 50);
  assert.equal(capped.length, 50);
  assert.equal(capped[0]!.sizeBytes, 60_000);
  assert.equal(capped[49]!.sizeBytes, 11_000, 'the ten smallest are the ones left out');
  assert.equal(nodeStatusImages(list, -1).length, 60);
  assert.deepEqual(nodeStatusImages(list, 0), []);
  assert.equal(nodeStatusImages(list.slice(0, 3), 50).length, 3);
});

test('status.images: names are the repo digests then the repo tags, at most five', () => {
  assert.equal(MAX_NAMES_PER_IMAGE_IN_NODE_STATUS, 5);
  const many = img('x', 5, ['r/x:1', 'r/x:2', 'r/x:3', 'r/x:4'], ['r/x@sha256:1', 'q/x@sha256:1']);
  assert.deepEqual(nodeStatusImages([many], -1), [{ names: ['r/x@sha256:1', 'q/x@sha256:1', 'r/x:1', 'r/x:2', 'r/x:3'], sizeBytes: 5 }]);
  assert.deepEqual(nodeStatusImages([img('y', 7, [], [])], -1), [{ names: [], sizeBytes: 7 }], 'an image with no name is still reported by size');
  assert.deepEqual(nodeStatusImages([img('z', 7, ['r/z:1'], [])], -1)[0]!.names, ['r/z:1']);
});

test('status.images: an empty image list gives an empty status list', () => {
  assert.deepEqual(nodeStatusImages([], 50), []);
  assert.deepEqual(nodeStatusImages([], -1), []);
});

test('status.images: a uint64 size (a string on the wire) becomes sizeBytes', () => {
  assert.equal(nodeStatusImages([img('big', 0)].map((i) => ({ ...i, size: '5368709120' })), -1)[0]!.sizeBytes, 5 * 2 ** 30);
});
