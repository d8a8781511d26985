// Webhook rules against requests: operations, group/version, resources with subresources and wildcards, scope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuleWithOperations } from '@nodelet/api';
import { findResource } from '../../resources.js';
import type { AdmissionRequest } from '../types.js';
import { isExempt, ruleMatches } from './match.js';

const req = (plural: string, group = '', subresource?: string, operation: AdmissionRequest['operation'] = 'UPDATE'): AdmissionRequest => ({
  operation, user: { name: 'u', groups: [] }, def: findResource(group, 'v1', plural)!, ...(subresource ? { subresource } : {}),
});
const rule = (resources: string[], o: Partial<RuleWithOperations> = {}): RuleWithOperations => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...o });

test('resources, subresources and their wildcards match as upstream', () => {
  const cases: Array<[string[], AdmissionRequest, boolean]> = [
    [['pods'], req('pods'), true],
    [['pods'], req('pods', '', 'status'), false],
    [['pods/status'], req('pods', '', 'status'), true],
    [['pods/status'], req('pods'), false],
    [['pods/*'], req('pods', '', 'status'), true],
    [['pods/*'], req('pods'), false],
    [['*'], req('configmaps'), true],
    [['*'], req('pods', '', 'status'), false],
    [['*/status'], req('deployments', 'apps', 'status'), true],
    [['*/status'], req('deployments', 'apps', 'scale'), false],
    [['*/*'], req('deployments', 'apps', 'scale'), true],
    [['*/*'], req('nodes'), true],
  ];
  for (const [resources, r, want] of cases) assert.equal(ruleMatches(rule(resources), r), want, `${resources.join(',')} vs ${r.def.plural}${r.subresource ? `/${r.subresource}` : ''}`);
});

test('operations, groups, versions and scope narrow a rule', () => {
  assert.equal(ruleMatches(rule(['pods'], { operations: ['CREATE'] }), req('pods')), false);
  assert.equal(ruleMatches(rule(['pods'], { operations: ['CREATE', 'UPDATE'] }), req('pods')), true);
  assert.equal(ruleMatches(rule(['deployments'], { apiGroups: [''] }), req('deployments', 'apps')), false);
  assert.equal(ruleMatches(rule(['deployments'], { apiGroups: ['apps'], apiVersions: ['v1beta1'] }), req('deployments', 'apps')), false);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), req('nodes')), false);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), req('namespaces')), true);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), req('namespaces')), false);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), req('configmaps')), true);
});

test('requests for webhook configurations are exempt', () => {
  assert.equal(isExempt(req('validatingwebhookconfigurations', 'admissionregistration.k8s.io')), true);
  assert.equal(isExempt(req('mutatingwebhookconfigurations', 'admissionregistration.k8s.io')), true);
  assert.equal(isExempt(req('pods')), false);
});
