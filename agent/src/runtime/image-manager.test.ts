import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import type { Container } from '@nodelet/api';
import type { ImageService } from '../kubecontainer/cri.js';
import { effectivePullPolicy, ImageManager, type ImageEvents } from './image-manager.js';
import { DOCKER_CONFIG_JSON_TYPE, DockerKeyring } from './keyring.js';

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

/** An image service that records each PullImage's auth; `accept` decides which user may pull. */
function authImages(accept: (username: string | undefined) => boolean, present = false) {
  const pulls: Array<string | undefined> = [];
  const images = {
    pullImage: async (req: { auth?: { username?: string; password?: string } }) => {
      pulls.push(req.auth ? `${req.auth.username}:${req.auth.password}` : undefined);
      if (!accept(req.auth?.username)) throw new Error(`unexpected status from HEAD request: 401 Unauthorized (${req.auth?.username ?? 'anonymous'})`);
      present = true;
      return { imageRef: 'sha256:abc' };
    },
    imageStatus: async () => ({ image: present ? { id: 'sha256:abc' } : undefined }),
  } as unknown as ImageService;
  return { pulls, images };
}

const keyringOf = (auths: Record<string, { username: string; password: string }>) => async () =>
  DockerKeyring.fromSecrets([{ name: 's', type: DOCKER_CONFIG_JSON_TYPE, data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })) } }]);

test('pull credentials reach PullImage: each matching one in turn until one works, never anonymous then', async () => {
  const signal = new AbortController().signal;
  const { pulls, images } = authImages((u) => u === 'good');
  const m = new ImageManager({ images, clock: new FakeClock(), maxParallelPulls: 1 });
  const keyring = keyringOf({ '127.0.0.1:5000/busybox': { username: 'stale', password: 'old' }, '127.0.0.1:5000': { username: 'good', password: 'pw' } });
  assert.equal(await m.ensureImage('a', container, quiet, signal, keyring), 'sha256:abc');
  assert.deepEqual(pulls, ['stale:old', 'good:pw'], 'the more specific credential first, then the next');

  const denied = authImages(() => false);
  const m2 = new ImageManager({ images: denied.images, clock: new FakeClock(), maxParallelPulls: 1 });
  await assert.rejects(m2.ensureImage('a', container, quiet, signal, keyring), (e) => hasCode(e, 'ERR_UNAVAILABLE') && /^Failed to pull image "127\.0\.0\.1:5000\/busybox:latest": \[.*401 Unauthorized \(stale\).*, .*401 Unauthorized \(good\).*\]$/.test((e as Error).message));
  assert.deepEqual(denied.pulls, ['stale:old', 'good:pw'], 'no anonymous attempt after the credentials failed');
});

test('an image no credential matches is pulled anonymously; secrets are not read for a present image', async () => {
  const signal = new AbortController().signal;
  const { pulls, images } = authImages(() => true);
  const m = new ImageManager({ images, clock: new FakeClock(), maxParallelPulls: 1 });
  let reads = 0;
  const keyring = async () => {
    reads++;
    return keyringOf({ 'elsewhere.example.com': { username: 'x', password: 'y' } })();
  };
  const c: Container = { ...container, imagePullPolicy: 'IfNotPresent' };
  await m.ensureImage('a', c, quiet, signal, keyring);
  assert.deepEqual(pulls, [undefined]);
  await m.ensureImage('a', c, quiet, signal, keyring);
  assert.equal(reads, 1, 'IfNotPresent with the image present: no pull, no secret read');
});

test('imagePullPolicy: Always pulls a present image, IfNotPresent does not, Never fails with ErrImageNeverPull when absent', async () => {
  const signal = new AbortController().signal;
  const present = authImages(() => true, true);
  const m = new ImageManager({ images: present.images, clock: new FakeClock(), maxParallelPulls: 1 });
  await m.ensureImage('a', { ...container, imagePullPolicy: 'IfNotPresent' }, quiet, signal);
  await m.ensureImage('a', { ...container, imagePullPolicy: 'Never' }, quiet, signal);
  assert.equal(present.pulls.length, 0);
  await m.ensureImage('a', { ...container, imagePullPolicy: 'Always' }, quiet, signal);
  assert.equal(present.pulls.length, 1);
  assert.equal(effectivePullPolicy({ name: 'c', image: 'busybox' }), 'Always');
  assert.equal(effectivePullPolicy({ name: 'c', image: 'busybox:latest' }), 'Always');
  assert.equal(effectivePullPolicy({ name: 'c', image: '127.0.0.1:5000/busybox' }), 'Always', 'a registry port is not a tag');
  assert.equal(effectivePullPolicy({ name: 'c', image: 'busybox:1.36' }), 'IfNotPresent');

  const absent = authImages(() => true);
  const m2 = new ImageManager({ images: absent.images, clock: new FakeClock(), maxParallelPulls: 1 });
  const failed: string[] = [];
  const events: ImageEvents = { ...quiet, failed: (_i, reason, message) => failed.push(`${reason}: ${message}`) };
  await assert.rejects(m2.ensureImage('a', { ...container, imagePullPolicy: 'Never' }, events, signal), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION'));
  assert.deepEqual(failed, [`ErrImageNeverPull: Container image "${IMAGE}" is not present with pull policy of Never`]);
  assert.equal(absent.pulls.length, 0);
});

test('a successful pull is announced (the node status image list is read again); a failed one is not', async () => {
  const { state, images } = fakeImages();
  let pulled = 0;
  const m = new ImageManager({ images, clock: new FakeClock(), maxParallelPulls: 1, onPulled: () => pulled++ });
  const signal = new AbortController().signal;
  assert.equal(await outcome(m.ensureImage('a', container, quiet, signal)), 'ErrImagePull');
  assert.equal(pulled, 0);
  state.registryUp = true;
  assert.equal(await m.ensureImage('b', container, quiet, signal), 'sha256:abc');
  assert.equal(pulled, 1);
});
