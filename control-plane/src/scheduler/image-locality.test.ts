import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPodContext } from './filters.js';
import { normalizedImageName } from './image-locality.js';
import { makeNode, makePod } from './testing/objects.js';
import { testCluster } from './testing/cluster.js';

const MB = 1024 * 1024;

test('normalizedImageName adds :latest only when there is no tag after the last slash', () => {
  const cases: Array<[string, string]> = [
    ['nginx', 'nginx:latest'],
    ['nginx:1.25', 'nginx:1.25'],
    ['localhost:5000/app', 'localhost:5000/app:latest'],
    ['registry.io/a/b:v1', 'registry.io/a/b:v1'],
    ['busybox@sha256:abcd', 'busybox@sha256:abcd'],
  ];
  for (const [i, o] of cases) assert.equal(normalizedImageName(i), o, i);
});

test('ImageLocality: size of the images present, damped by how many nodes have them, between 23 MiB and 1000 MiB per container', () => {
  const nginx = { names: ['nginx:latest', 'docker.io/library/nginx:latest'], sizeBytes: 500 * MB };
  const big = { names: ['big:v1'], sizeBytes: 2000 * MB };
  const cl = testCluster([makeNode('n1', { images: [nginx, big] }), makeNode('n2'), makeNode('n3', { images: [nginx] })]);
  const score = cl.scorers.find((s) => s.name === 'ImageLocality')!;
  const one = makePod('p', { containers: [{ name: 'c', image: 'nginx' }] });
  // 500 MiB × 2/3 nodes, on the 23..1000 MiB scale.
  assert.deepEqual(score.score(newPodContext(one), cl.cache.list), [31, 0, 31]);
  // Two containers: the scale is 23..2000 MiB; big:v1 on one node of three adds 2000/3 MiB.
  const two = makePod('p', { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'big:v1' }] });
  assert.deepEqual(score.score(newPodContext(two), cl.cache.list), [49, 0, 15]);
  // An image no node has: nothing to say.
  assert.equal(score.score(newPodContext(makePod('q', { containers: [{ name: 'c', image: 'other' }] })), cl.cache.list), undefined);
  // The node count follows node updates and deletions.
  cl.cache.removeNode('n3');
  assert.equal(cl.cache.imageNodeCount('nginx:latest'), 1);
  cl.cache.addOrUpdateNode(makeNode('n1'));
  assert.equal(cl.cache.imageNodeCount('nginx:latest'), 0);
});
