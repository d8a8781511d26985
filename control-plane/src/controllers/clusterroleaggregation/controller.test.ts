import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterRole } from '@nodelet/api';
import { aggregatedRules } from './controller.js';

describe('ClusterRole aggregation', () => {
  const role = (name: string, labels: Record<string, string>, verbs: string[]): ClusterRole => ({
    metadata: { name, labels }, rules: [{ verbs, apiGroups: [''], resources: ['pods'] }],
  });
  it('takes the rules of matching roles in name order, without duplicates or itself', () => {
    const view: ClusterRole = { metadata: { name: 'view', labels: { 'agg-view': 'true' } }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'agg-view': 'true' } }] }, rules: [] };
    const all = [view, role('z-extra', { 'agg-view': 'true' }, ['watch']), role('a-base', { 'agg-view': 'true' }, ['get']), role('dup', { 'agg-view': 'true' }, ['get']), role('other', {}, ['delete'])];
    assert.deepEqual(aggregatedRules(view, all).map((r) => r.verbs[0]), ['get', 'watch']);
  });
});
