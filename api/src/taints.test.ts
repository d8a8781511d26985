import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Toleration } from './types/index.js';
import { toleratesTaint, tolerationsTolerate } from './taints.js';

test('toleratesTaint follows the core/v1 rules', () => {
  const taint = { key: 'k', value: 'v', effect: 'NoSchedule' as const };
  const cases: Array<[Toleration, boolean]> = [
    [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }, true],
    [{ key: 'k', value: 'v' }, true], // empty operator = Equal, empty effect = all
    [{ key: 'k', operator: 'Equal', value: 'x' }, false],
    [{ key: 'k', operator: 'Exists' }, true],
    [{ operator: 'Exists' }, true], // empty key + Exists tolerates everything
    [{ value: 'v' }, false], // empty key needs Exists
    [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, false],
    [{ key: 'other', operator: 'Exists' }, false],
  ];
  for (const [t, want] of cases) assert.equal(toleratesTaint(t, taint), want, JSON.stringify(t));
});

test('tolerationsTolerate: any one toleration is enough, none tolerates nothing', () => {
  const taint = { key: 'k', effect: 'NoExecute' as const };
  assert.equal(tolerationsTolerate([{ key: 'x', operator: 'Exists' }, { key: 'k', operator: 'Exists' }], taint), true);
  assert.equal(tolerationsTolerate([], taint), false);
  assert.equal(tolerationsTolerate(undefined, taint), false);
});
