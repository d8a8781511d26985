import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatRule, ruleAllows, uncoveredRules } from './policy-rule.js';

describe('RBAC rule matching', () => {
  const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]) => ({ verbs, apiGroups, resources, ...(resourceNames ? { resourceNames } : {}) });

  it('matches verbs, groups, resources and subresources as upstream', () => {
    const a = { verb: 'get', group: '', resource: 'pods', namespace: 'default', name: 'web' };
    assert.equal(ruleAllows(r(['get'], [''], ['pods']), a), true);
    assert.equal(ruleAllows(r(['*'], ['*'], ['*']), a), true);
    assert.equal(ruleAllows(r(['get'], ['apps'], ['pods']), a), false);
    assert.equal(ruleAllows(r(['get'], [''], ['pods']), { ...a, subresource: 'log' }), false, 'pods does not cover pods/log');
    assert.equal(ruleAllows(r(['get'], [''], ['pods/log']), { ...a, subresource: 'log' }), true);
    assert.equal(ruleAllows(r(['get'], ['*'], ['*/scale']), { ...a, group: 'apps', resource: 'deployments', subresource: 'scale' }), true);
  });

  it('resourceNames restrict to named requests (never create or list)', () => {
    const rule = r(['get', 'create', 'list'], [''], ['configmaps'], ['settings']);
    assert.equal(ruleAllows(rule, { verb: 'get', group: '', resource: 'configmaps', name: 'settings' }), true);
    assert.equal(ruleAllows(rule, { verb: 'get', group: '', resource: 'configmaps', name: 'other' }), false);
    assert.equal(ruleAllows(rule, { verb: 'create', group: '', resource: 'configmaps' }), false);
    assert.equal(ruleAllows(rule, { verb: 'list', group: '', resource: 'configmaps' }), false);
  });

  it('non-resource URLs match exactly or by a trailing *', () => {
    const rule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    assert.equal(ruleAllows(rule, { verb: 'get', path: '/healthz' }), true);
    assert.equal(ruleAllows(rule, { verb: 'get', path: '/apis/apps/v1' }), true);
    assert.equal(ruleAllows(rule, { verb: 'get', path: '/api' }), false);
    assert.equal(ruleAllows(rule, { verb: 'post', path: '/healthz' }), false);
  });

  it('coverage breaks wanted rules into atoms and reports the ones not held', () => {
    const held = [r(['get', 'list'], [''], ['pods', 'services']), r(['*'], ['apps'], ['deployments'])];
    assert.deepEqual(uncoveredRules(held, [r(['get'], [''], ['pods']), r(['delete'], ['apps'], ['deployments'])]), []);
    assert.deepEqual(uncoveredRules(held, [r(['get', 'delete'], [''], ['pods'])]), [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]);
    assert.equal(uncoveredRules([r(['get'], [''], ['secrets'], ['a'])], [r(['get'], [''], ['secrets'])]).length, 1, 'a named grant does not cover all names');
    assert.equal(formatRule({ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }), '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}');
  });
});
