import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMountPoints } from './sweep.js';

const MOUNTINFO = [
  '22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '301 22 0:60 / /tmp/rt-a/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw,relatime - overlay overlay rw,lowerdir=/x',
  '302 22 0:4 net:[4026532] /tmp/rt-a/state/netns/cni-1 rw shared:9 - nsfs nsfs rw',
  '303 22 0:61 / /tmp/rt-a/with\\040space rw - tmpfs shm rw',
  '304 22 0:62 / /tmp/rt-ab/other rw - tmpfs shm rw',
  '305 22 0:63 / /tmp/rt-a rw - tmpfs t rw',
  '',
].join('\n');

test('parseMountPoints: at or below the dir, escapes decoded, siblings with a common prefix excluded', () => {
  assert.deepEqual(parseMountPoints(MOUNTINFO, '/tmp/rt-a'), [
    '/tmp/rt-a/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs',
    '/tmp/rt-a/state/netns/cni-1',
    '/tmp/rt-a/with space',
    '/tmp/rt-a',
  ]);
  assert.deepEqual(parseMountPoints(MOUNTINFO, '/nowhere'), []);
});
