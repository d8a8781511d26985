import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goFormatG, humanDuration, humanSize, humanSizeWithPrecision, pruneDefaults, tabwrite, truncateId } from './format.js';

test('truncateId keeps 13 characters after the prefix', () => {
  assert.equal(truncateId('c186705e83d18fea900ef876510fdbf1'), 'c186705e83d18');
  assert.equal(truncateId('sha256:d197a536637912185c775e', 'sha256:'), 'd197a53663791');
  assert.equal(truncateId('short'), 'short');
});

test('tabwrite: minwidth 20, padding 3, last column unpadded', () => {
  assert.equal(tabwrite([['A', 'B', 'C'], ['x'.repeat(18), 'y', 'z']]), `A${' '.repeat(20)}B${' '.repeat(19)}C\n${'x'.repeat(18)}   y${' '.repeat(19)}z\n`);
});

test('go-units HumanSize / HumanSizeWithPrecision (decimal, %g)', () => {
  const cases: [number, number, string][] = [
    [0, 4, '0B'],
    [999, 4, '999B'],
    [1000, 4, '1kB'],
    [1234, 4, '1.234kB'],
    [462_848, 4, '462.8kB'],
    [2_130_686, 3, '2.13MB'],
    [686_999, 3, '687kB'],
    [1_500_000, 3, '1.5MB'],
    [999_500, 3, '1e+03kB'], // Go's %.3g rounds up into exponent form too
    [1e24, 4, '1YB'],
  ];
  for (const [n, p, want] of cases) assert.equal(humanSizeWithPrecision(n, p), want, `${n} @${p}`);
  assert.equal(humanSize(20_480), '20.48kB');
  assert.equal(goFormatG(0.000012345, 3), '1.23e-05');
});

test('go-units HumanDuration boundaries', () => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  const d = 24 * h;
  const cases: [number, string][] = [
    [999, 'Less than a second'],
    [s, '1 second'],
    [59 * s, '59 seconds'],
    [60 * s, 'About a minute'],
    [119 * s, 'About a minute'],
    [2 * m, '2 minutes'],
    [59 * m, '59 minutes'],
    [60 * m, 'About an hour'],
    [89 * m, 'About an hour'],
    [91 * m, '2 hours'],
    [47 * h, '47 hours'],
    [48 * h, '2 days'],
    [13 * d, '13 days'],
    [14 * d, '2 weeks'],
    [59 * d, '8 weeks'],
    [60 * d, '2 months'],
    [729 * d, '24 months'],
    [730 * d, '2 years'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
});

test('pruneDefaults drops proto defaults but keeps map entries', () => {
  assert.deepEqual(pruneDefaults({ id: 'x', n: 0, b: false, s: '', l: [], m: {}, o: null, labels: { a: '' }, nested: { v: '' } }), { id: 'x', labels: { a: '' } });
});
