import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { Container } from '@nodelet/api';
import type { ImageService } from './cri.js';
import { ImageManager, type ImageEvents } from './image-manager.js';

const IMAGE = '127.0.0.1:5000/busybox:latest';
const container: Container = { name: 'main', image: IMAGE };
const quiet: ImageEvents = { pulling: () => {}, pulled: () => {}, failed: () => {} };

/** An image service whose registry is up or down; counts the pulls that reached it. */
function fakeImages() {
  const state = { registryUp: false, pulls: 0 };
  const images = {
    pullImage: async () => {
      state.pulls++;
      await new Promise((r) => setImmediate(r));
      if (!state.registryUp) throw new Error('dial tcp 127.0.0.1:5000: connect: connection refused');
      return { imageRef: 'sha256:abc' };
    },
    imageStatus: async () => ({ image: state.registryUp ? { id: 'sha256:abc' } : undefined }),
  } as unknown as ImageService;
  return { state, images };
}

async function outcome(p: Promise<string>): Promise<string> {
  try {
    return await p;
  } catch (err) {
    return hasCode(err, 'ERR_IMAGE_PULL_BACKOFF') ? 'ImagePullBackOff' : 'ErrImagePull';
  }
}

test('pods queued behind one another for an image back off on their own failure only (soak seed 2137831521)', async () => {
  const clock = new FakeClock();
  const { state, images } = fakeImages();
  const m = new ImageManager({ images, clock, maxParallelPulls: 1 });
  const signal = new AbortController().signal;
  const pods = ['a', 'b', 'c', 'd', 'e'];

  // The registry is away: the five serialized pulls fail one after the other.
  const first = await Promise.all(pods.map((uid) => outcome(m.ensureImage(uid, container, quiet, signal))));
  assert.deepEqual(first, pods.map(() => 'ErrImagePull'));
  assert.equal(state.pulls, 5);

  // One initial backoff (10 s) later, with the registry back, every pod pulls again. A backoff
  // shared by the image had doubled per queued failure to 160 s and every pod waited for it.
  state.registryUp = true;
  clock.advance(10_001);
  const second = await Promise.all(pods.map((uid) => outcome(m.ensureImage(uid, container, quiet, signal))));
  assert.deepEqual(second, pods.map(() => 'sha256:abc'));
  assert.equal(state.pulls, 10);
});

test("one pod's failed pull does not put another pod of the same image in backoff", async () => {
  const clock = new FakeClock();
  const { state, images } = fakeImages();
  const m = new ImageManager({ images, clock, maxParallelPulls: 1 });
  const signal = new AbortController().signal;

  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'ErrImagePull');
  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'ImagePullBackOff');
  assert.equal(await outcome(m.ensureImage('b', container, quiet, signal)), 'ErrImagePull', 'pod b pulls itself');
  assert.equal(state.pulls, 2);

  // Pod a's second failure doubles its own delay to 20 s.
  clock.advance(10_001);
  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'ErrImagePull');
  clock.advance(10_001);
  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'ImagePullBackOff');

  // A pod that is gone leaves nothing behind: the same UID starts without backoff.
  m.forget('a');
  state.registryUp = true;
  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'sha256:abc');
});
