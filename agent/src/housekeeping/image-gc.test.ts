// Image GC order and age: least recently used first, nothing first seen less than
// imageMinimumGCAge ago, images in use never (fake image service, real GC code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger } from '@nodelet/base';
import { collectImages, ImageUsage, type GcOptions } from './gc.js';

type Img = { id: string; repoTags: string[]; size: string; pinned?: boolean };

function world(images: Img[], running: () => string[]) {
  let now = 0;
  const removed: string[] = [];
  const o = {
    images: {
      listImages: async () => ({ images: images.filter((i) => !removed.includes(i.id)) }),
      removeImage: async (q: { image: { image: string } }) => void removed.push(q.image.image),
    },
    pleg: { all: () => new Map([['p', { containers: running().map((image) => ({ image, imageRef: image })) }]]) },
    log: noopLogger,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    imageMinimumGCAgeMs: 120_000,
    pinnedImages: () => ['pause:1'],
    now: () => now,
  } as unknown as GcOptions;
  return { o, removed, advance: (ms: number) => (now += ms) };
}

test('image GC: young images stay; the least recently used goes first', async () => {
  const imgs: Img[] = [
    { id: 'sha256:a', repoTags: ['a:1'], size: '10' },
    { id: 'sha256:b', repoTags: ['b:1'], size: '10' },
    { id: 'sha256:p', repoTags: ['pause:1'], size: '1' },
  ];
  let running = ['a:1', 'b:1'];
  const w = world(imgs, () => running);
  const usage = new ImageUsage();
  const signal = AbortSignal.timeout(10_000);
  assert.equal(await collectImages(w.o, usage, signal, true), 0, 'both in use');
  w.advance(60_000);
  running = ['a:1'];
  assert.equal(await collectImages(w.o, usage, signal, true), 0, 'b unused but first seen 60 s ago (< imageMinimumGCAge)');
  w.advance(60_000);
  running = ['b:1'];
  // a was last seen in use 60 s after b was: b, in use now, stays; a goes.
  await collectImages(w.o, usage, signal, true);
  assert.deepEqual(w.removed, ['sha256:a']);
});

test('ImageUsage: least recently used first, then first seen; too young filtered out', () => {
  const u = new ImageUsage();
  const list = [{ id: 'x', repoTags: [] }, { id: 'y', repoTags: [] }, { id: 'z', repoTags: [] }];
  u.observe(list, () => true, 0);
  u.observe(list, (i) => i.id === 'x', 100);
  u.observe([...list, { id: 'new', repoTags: [] }], () => false, 150);
  const order = u.removable([...list, { id: 'new', repoTags: [] }], 100, 200).map((i) => i.id);
  assert.deepEqual(order, ['y', 'z', 'x'], 'y and z last used at 0 (then by first seen: equal, list order), x at 100; new is too young');
});

test('image GC: a pass that removed an image says so (the node status image list is read again); one that removed none does not', async () => {
  const imgs: Img[] = [{ id: 'sha256:a', repoTags: ['a:1'], size: '10' }];
  let running = ['a:1'];
  const w = world(imgs, () => running);
  let told = 0;
  const o = { ...w.o, onImagesRemoved: () => told++ };
  const usage = new ImageUsage();
  const signal = AbortSignal.timeout(10_000);
  await collectImages(o, usage, signal, true);
  assert.equal(told, 0, 'in use: nothing removed');
  w.advance(120_000);
  running = [];
  await collectImages(o, usage, signal, true);
  assert.deepEqual(w.removed, ['sha256:a']);
  assert.equal(told, 1);
});
