import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { canonicalQuantity, formatQuantity, parseQuantity, parseQuantityMilli, quantityFormat } from './quantity.js';

test('parseQuantity reads decimal, binary and exponent forms', () => {
  const cases: Array<[string, number]> = [
    ['0', 0], ['1', 1], ['100m', 0.1], ['1500m', 1.5], ['2.5', 2.5], ['.5', 0.5], ['1.', 1],
    ['1k', 1000], ['1M', 1e6], ['3G', 3e9], ['1T', 1e12], ['1P', 1e15], ['1E', 1e18],
    ['1Ki', 1024], ['128Mi', 128 * 1024 ** 2], ['1.5Gi', 1.5 * 1024 ** 3], ['2Ti', 2 * 1024 ** 4],
    ['1e3', 1000], ['1E3', 1000], ['5e-3', 0.005], ['+4', 4], ['-2k', -2000], ['10n', 1e-8], ['7u', 7e-6],
  ];
  for (const [s, v] of cases) assert.equal(parseQuantity(s), v, s);
});

test('parseQuantity rejects malformed quantities with ERR_INVALID_ARGUMENT', () => {
  for (const s of ['', 'abc', '1Kb', '1..2', '1 Gi', 'Mi', '1mi', '1e', '--1', '1.2.3']) {
    assert.throws(() => parseQuantity(s), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /invalid quantity/.test((e as Error).message), s);
  }
});

test('parseQuantityMilli rounds up like MilliValue', () => {
  assert.equal(parseQuantityMilli('250m'), 250);
  assert.equal(parseQuantityMilli('1'), 1000);
  assert.equal(parseQuantityMilli('0.3'), 300);
  assert.equal(parseQuantityMilli('0.1m'), 1);
  assert.equal(parseQuantityMilli('1Ki'), 1_024_000);
  assert.equal(parseQuantityMilli('2.5'), 2500);
});

test('formatQuantity prints the canonical decimal form', () => {
  const cases: Array<[number, string]> = [
    [0, '0'], [0.1, '100m'], [1.5, '1500m'], [1, '1'], [1000, '1k'], [1500, '1500'], [2e9, '2G'],
    [0.25, '250m'], [1e-9, '1n'], [0.3, '300m'], [-0.5, '-500m'], [123456789, '123456789'], [4e6, '4M'],
  ];
  for (const [v, s] of cases) assert.equal(formatQuantity(v), s, String(v));
});

test('formatQuantity BinarySI uses the largest exact power of 1024', () => {
  assert.equal(formatQuantity(1024, 'BinarySI'), '1Ki');
  assert.equal(formatQuantity(1024 ** 3, 'BinarySI'), '1Gi');
  assert.equal(formatQuantity(1536 * 1024 ** 2, 'BinarySI'), '1536Mi');
  assert.equal(formatQuantity(1536, 'BinarySI'), '1536');
  assert.equal(formatQuantity(100, 'BinarySI'), '100', 'below 1024 stays decimal');
  assert.equal(formatQuantity(0.5, 'BinarySI'), '500m', 'fractions stay decimal');
  assert.equal(formatQuantity(8 * 1024 ** 5, 'BinarySI'), '8Pi');
});

test('canonicalQuantity keeps the written style and round-trips', () => {
  assert.equal(canonicalQuantity('0.5'), '500m');
  assert.equal(canonicalQuantity('1024Mi'), '1Gi');
  assert.equal(canonicalQuantity('1000m'), '1');
  assert.equal(canonicalQuantity('1e3'), '1k');
  assert.equal(quantityFormat('1Gi'), 'BinarySI');
  assert.equal(quantityFormat('1G'), 'DecimalSI');
  for (const s of ['100m', '1Gi', '250Mi', '3', '1k', '2G', '15Ki']) assert.equal(canonicalQuantity(s), s);
});
