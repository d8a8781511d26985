import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergePatch } from './merge-patch.js';

test('RFC 7386 appendix A examples', () => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of cases) assert.deepEqual(mergePatch(target, patch), want, JSON.stringify([target, patch]));
});

test('neither argument is changed, and the result holds copies of patch values', () => {
  const target = { a: { b: 1 }, keep: { x: 1 } };
  const patch = { a: { c: [1, 2] } };
  const out = mergePatch(target, patch) as { a: { c: number[] }; keep: unknown };
  assert.deepEqual(target, { a: { b: 1 }, keep: { x: 1 } });
  out.a.c.push(3);
  assert.deepEqual(patch, { a: { c: [1, 2] } });
  assert.equal(out.keep, target.keep, 'untouched subtrees are shared');
});
