import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import {
  fieldValue,
  formatFieldSelector,
  formatLabelSelector,
  labelSelectorFromObject,
  matchFields,
  matchLabels,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.js';

const web = { app: 'web', tier: 'frontend', env: 'prod', replicas: '3' };

test('parseLabelSelector parses every operator', () => {
  assert.deepEqual(parseLabelSelector('app=web, tier==frontend,env!=dev,zone in (a, b),track notin (canary),!legacy,owner,replicas>2,replicas<10'), [
    { key: 'app', operator: 'Equals', values: ['web'] },
    { key: 'tier', operator: 'Equals', values: ['frontend'] },
    { key: 'env', operator: 'NotEquals', values: ['dev'] },
    { key: 'zone', operator: 'In', values: ['a', 'b'] },
    { key: 'track', operator: 'NotIn', values: ['canary'] },
    { key: 'legacy', operator: 'DoesNotExist', values: [] },
    { key: 'owner', operator: 'Exists', values: [] },
    { key: 'replicas', operator: 'Gt', values: ['2'] },
    { key: 'replicas', operator: 'Lt', values: ['10'] },
  ]);
  assert.deepEqual(parseLabelSelector(''), []);
  assert.deepEqual(parseLabelSelector('kubernetes.io/cluster-service=true'), [
    { key: 'kubernetes.io/cluster-service', operator: 'Equals', values: ['true'] },
  ]);
  assert.deepEqual(parseLabelSelector('a='), [{ key: 'a', operator: 'Equals', values: [''] }]);
});

test('matchLabels follows upstream semantics for missing labels', () => {
  const m = (s: string, l: Record<string, string> | undefined = web): boolean => matchLabels(parseLabelSelector(s), l);
  assert.equal(m(''), true);
  assert.equal(m('', undefined), true);
  assert.equal(m('app=web'), true);
  assert.equal(m('app=db'), false);
  assert.equal(m('app!=db'), true);
  assert.equal(m('missing!=x'), true, '!= matches when the label is absent');
  assert.equal(m('missing notin (x)'), true, 'notin matches when the label is absent');
  assert.equal(m('missing in (x)'), false);
  assert.equal(m('env in (prod,staging)'), true);
  assert.equal(m('env notin (prod)'), false);
  assert.equal(m('app'), true);
  assert.equal(m('!app'), false);
  assert.equal(m('!missing'), true);
  assert.equal(m('replicas>2,replicas<4'), true);
  assert.equal(m('replicas>3'), false);
  assert.equal(m('app>1'), false, 'Gt on a non-integer label value does not match');
  assert.equal(m('app=web,tier=backend'), false, 'requirements are ANDed');
});

test('parseLabelSelector rejects malformed selectors with ERR_INVALID_ARGUMENT', () => {
  for (const s of ['app=web,', 'a b', 'x in (a', 'x in ()', '-bad=x', 'a=b=c', 'a>b', 'x in a)', '!', `k=${'v'.repeat(64)}`, 'UPPER.example.com/x=y']) {
    assert.throws(() => parseLabelSelector(s), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'), s);
  }
});

test('labelSelectorFromObject converts matchLabels and matchExpressions; format round-trips', () => {
  const sel = labelSelectorFromObject({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'env', operator: 'In', values: ['prod', 'staging'] },
      { key: 'legacy', operator: 'DoesNotExist' },
    ],
  });
  assert.equal(formatLabelSelector(sel), 'app=web,env in (prod,staging),!legacy');
  assert.deepEqual(parseLabelSelector(formatLabelSelector(sel)), sel);
  assert.equal(matchLabels(sel, web), true);
  assert.equal(matchLabels(sel, { ...web, legacy: '1' }), false);
  assert.deepEqual(labelSelectorFromObject(undefined), []);
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
});

test('parseFieldSelector parses =, == and != with escapes', () => {
  assert.deepEqual(parseFieldSelector('spec.nodeName=node-1,status.phase!=Succeeded,metadata.name==x'), [
    { field: 'spec.nodeName', operator: '=', value: 'node-1' },
    { field: 'status.phase', operator: '!=', value: 'Succeeded' },
    { field: 'metadata.name', operator: '=', value: 'x' },
  ]);
  assert.deepEqual(parseFieldSelector('spec.nodeName='), [{ field: 'spec.nodeName', operator: '=', value: '' }]);
  assert.deepEqual(parseFieldSelector('a=x\\,y\\=z\\\\'), [{ field: 'a', operator: '=', value: 'x,y=z\\' }]);
  assert.deepEqual(parseFieldSelector(''), []);
  for (const s of ['nodeName', 'a=b=c', 'a=\\q', '=x', 'a=b,,c=d']) {
    assert.throws(() => parseFieldSelector(s), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'), s);
  }
});

test('matchFields and fieldValue evaluate against an object', () => {
  const pod = { metadata: { name: 'x', namespace: 'default' }, spec: { nodeName: 'node-1', hostNetwork: true }, status: { phase: 'Running' } };
  const get = (f: string): string => fieldValue(pod, f);
  const m = (s: string): boolean => matchFields(parseFieldSelector(s), get);
  assert.equal(m('spec.nodeName=node-1'), true);
  assert.equal(m('spec.nodeName=node-2'), false);
  assert.equal(m('spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed'), true);
  assert.equal(m('status.phase!=Running'), false);
  assert.equal(m('spec.hostNetwork=true'), true);
  assert.equal(m('spec.schedulerName='), true, 'a missing field is the empty string');
  assert.equal(matchFields(parseFieldSelector('metadata.name=x'), { 'metadata.name': 'x' }), true);
  assert.equal(fieldValue(pod, 'spec'), '');
});

test('formatFieldSelector escapes values and round-trips', () => {
  const s = formatFieldSelector({ 'involvedObject.name': 'a,b', 'involvedObject.namespace': 'default' });
  assert.equal(s, 'involvedObject.name=a\\,b,involvedObject.namespace=default');
  assert.deepEqual(formatFieldSelector(parseFieldSelector(s)), s);
  assert.equal(matchFields(parseFieldSelector(s), { 'involvedObject.name': 'a,b', 'involvedObject.namespace': 'default' }), true);
});
