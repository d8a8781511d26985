import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentile, percentileIndex } from './percentile.js';

test('nearest rank: the sample at rank ceil(p/100 * n), never an interpolation', () => {
  const ten = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
  assert.equal(percentile(ten, 50), 5);
  assert.equal(percentile(ten, 90), 9);
  assert.equal(percentile(ten, 99), 10);
  assert.equal(percentile(ten, 100), 10);
  assert.equal(percentile(ten, 0), 1);
  assert.equal(percentile(ten, 11), 2);
  assert.equal(percentile([1, 2, 3, 4], 50), 2);
  assert.equal(percentile([1, 2, 3, 4], 51), 3);
  assert.equal(percentile([7], 99), 7);
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(hundred, 99), 99);
  assert.equal(percentile(hundred, 50), 50);
});

test('input is not reordered; no samples gives NaN; p outside 0..100 refused', () => {
  const xs = [3, 1, 2];
  assert.equal(percentile(xs, 50), 2);
  assert.deepEqual(xs, [3, 1, 2]);
  assert.ok(Number.isNaN(percentile([], 99)));
  assert.equal(percentileIndex(0, 50), -1);
  assert.throws(() => percentile(xs, 101), RangeError);
  assert.throws(() => percentile(xs, Number.NaN), RangeError);
});
