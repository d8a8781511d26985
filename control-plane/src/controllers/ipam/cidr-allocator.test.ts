import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CidrAllocator } from './cidr-allocator.js';

test('allocates /24 blocks of 10.244.0.0/16 lowest first, reuses released ones', () => {
  const a = new CidrAllocator();
  assert.equal(a.capacity, 256);
  assert.equal(a.occupy('10.244.1.0/24'), true);
  assert.equal(a.allocate(), '10.244.0.0/24');
  assert.equal(a.allocate(), '10.244.2.0/24');
  a.release('10.244.0.0/24');
  assert.equal(a.allocate(), '10.244.0.0/24');
  assert.equal(a.occupy('192.168.0.0/24'), false);
  assert.equal(a.occupy('10.244.3.0/25'), false);
  assert.equal(a.occupy('10.244.1.0/24'), false, 'a CIDR already held cannot be occupied twice');
});

test('exhaustion returns undefined; bad masks are rejected', () => {
  const a = new CidrAllocator('10.0.0.0/23', 24);
  assert.equal(a.allocate(), '10.0.0.0/24');
  assert.equal(a.allocate(), '10.0.1.0/24');
  assert.equal(a.allocate(), undefined);
  assert.throws(() => new CidrAllocator('10.0.0.0/24', 16), RangeError);
});
