import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePodRef } from './trace.js';

test('a pod is <namespace>/<name>, or <name> in default; anything else is refused', () => {
  assert.deepEqual(parsePodRef('kube-system/dns-1'), { namespace: 'kube-system', name: 'dns-1' });
  assert.deepEqual(parsePodRef('web'), { namespace: 'default', name: 'web' });
  for (const bad of ['', '/web', 'ns/', 'a/b/c']) assert.throws(() => parsePodRef(bad), /is not <namespace>\/<name> or <name>/);
});
