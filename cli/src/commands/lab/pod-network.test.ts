import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labVxlanVni } from './pod-network.js';

test('each lab cluster CIDR gets its own VNI (second and third octets), never 0', () => {
  assert.equal(labVxlanVni('10.229.0.0/16'), 229 * 256);
  assert.equal(labVxlanVni('10.237.0.0/16'), 237 * 256);
  assert.notEqual(labVxlanVni('10.244.0.0/16'), labVxlanVni('10.245.0.0/16'));
  assert.equal(labVxlanVni('10.0.0.0/8'), 1);
});
