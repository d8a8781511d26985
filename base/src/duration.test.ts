import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './duration.js';

test('Go time.ParseDuration forms, in milliseconds', () => {
  const cases: Array<[string, number]> = [
    ['0', 0], ['500ms', 500], ['10s', 10_000], ['1m30s', 90_000], ['2m0s', 120_000], ['1h', 3_600_000], ['2h45m', 9_900_000],
    ['1.5h', 5_400_000], ['.5s', 500], ['5.s', 5_000], ['1500us', 1.5], ['1500µs', 1.5], ['1500μs', 1.5], ['2000000ns', 2], [' 30s ', 30_000], ['+3s', 3_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text, { bare: 'reject' }), ms, text);
});

test('a bare number is what the caller says: an error as in Go, or seconds', () => {
  assert.throws(() => parseDuration('30', { bare: 'reject' }), { code: 'ERR_INVALID_ARGUMENT', message: 'invalid duration "30": missing unit (e.g. "500ms", "10s", "1m30s", "2h")' });
  assert.equal(parseDuration('30', { bare: 'seconds' }), 30_000);
  assert.equal(parseDuration('1.5', { bare: 'seconds' }), 1_500);
  assert.equal(parseDuration('0', { bare: 'reject' }), 0, '"0" needs no unit, as in Go');
});

test('malformed, empty and negative durations are refused with what was expected', () => {
  for (const text of ['', 's', '10x', '1m30', '10 s', '1d', '-', '.s', '1..5s']) {
    assert.throws(() => parseDuration(text, { bare: 'seconds' }), { code: 'ERR_INVALID_ARGUMENT' }, text);
  }
  assert.throws(() => parseDuration('-1m', { bare: 'reject' }), /invalid duration "-1m": must not be negative/);
  assert.equal(parseDuration('-1m', { bare: 'reject', allowNegative: true }), -60_000);
});
