import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rfc3339, rfc3339Micro } from './time.js';

test('metav1.Time drops the milliseconds; MicroTime keeps six digits', () => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  assert.equal(rfc3339(ms), '2026-01-02T03:04:05Z');
  assert.equal(rfc3339Micro(ms), '2026-01-02T03:04:05.678000Z');
});

test('rfc3339 remembers only the last second it formatted: any other instant is formatted anew', () => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 0);
  assert.equal(rfc3339(ms + 999), '2026-01-02T03:04:05Z');
  assert.equal(rfc3339(ms), '2026-01-02T03:04:05Z');
  assert.equal(rfc3339(ms + 1000), '2026-01-02T03:04:06Z');
  assert.equal(rfc3339(ms - 1), '2026-01-02T03:04:04Z');
  assert.equal(rfc3339(-1), '1969-12-31T23:59:59Z');
  assert.equal(rfc3339(0), '1970-01-01T00:00:00Z');
  assert.throws(() => rfc3339(NaN), RangeError);
});
