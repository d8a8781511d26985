import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rfc3339, rfc3339Micro } from './time.js';

test('metav1.Time drops the milliseconds; MicroTime keeps six digits', () => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  assert.equal(rfc3339(ms), '2026-01-02T03:04:05Z');
  assert.equal(rfc3339Micro(ms), '2026-01-02T03:04:05.678000Z');
});
