// Which pod updates PodSecurity judges again (upstream isSignificantPodUpdate).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiObject } from '../../object.js';
import { isSignificantPodUpdate } from './pod-update.js';

const pod = (spec: Record<string, unknown>, labels: Record<string, string> = {}): ApiObject => ({ metadata: { name: 'p', labels }, spec });
const c = (name: string, image = 'busybox:1.36', extra: Record<string, unknown> = {}) => ({ name, image, ...extra });

test('metadata, tolerations and unchanged images are not significant; images, counts and new ephemeral containers are', () => {
  const old = pod({ initContainers: [c('i')], containers: [c('a')], ephemeralContainers: [c('e')] });
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a')], ephemeralContainers: [c('e')], tolerations: [{ operator: 'Exists' }] }, { x: 'y' }), old), false);
  // Only images are read: a securityContext change alone (rejected by validation anyway) is not.
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a', 'busybox:1.36', { securityContext: { privileged: true } })], ephemeralContainers: [c('e')] }), old), false);
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a', 'busybox:1.37')], ephemeralContainers: [c('e')] }), old), true);
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i', 'x')], containers: [c('a')], ephemeralContainers: [c('e')] }), old), true);
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a'), c('b')], ephemeralContainers: [c('e')] }), old), true);
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a')], ephemeralContainers: [c('e'), c('debug')] }), old), true);
  assert.equal(isSignificantPodUpdate(pod({ initContainers: [c('i')], containers: [c('a')], ephemeralContainers: [c('e', 'other')] }), old), true);
});
