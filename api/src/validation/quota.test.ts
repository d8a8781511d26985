import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultLimitRange, validateLimitRange, validatePriorityClass, validateResourceQuota } from './quota.js';

const messages = (errs: Array<{ field: string; message: string }>): string[] => errs.map((e) => `${e.field}: ${e.message}`);

test('ResourceQuota: quantities, integer counts, scopes and the resources a scope can count', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['valid', { hard: { pods: '2', 'requests.cpu': '500m', 'count/deployments.apps': '3' } }, []],
    ['valid scoped', { hard: { pods: '2', 'limits.memory': '1Gi' }, scopes: ['NotTerminating'] }, []],
    ['negative', { hard: { memory: '-1' } }, ['spec.hard[memory]: Invalid value: "-1": must be greater than or equal to 0']],
    ['fractional count', { hard: { pods: '1500m' } }, ['spec.hard[pods]: Invalid value: "1500m": must be an integer']],
    ['unknown scope', { scopes: ['Sometimes'] }, ['spec.scopes[0]: Unsupported value: "Sometimes": supported values: "BestEffort", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating"']],
    ['conflicting', { scopes: ['Terminating', 'NotTerminating'] }, ['spec.scopes: Invalid value: ["NotTerminating","Terminating"]: conflicting scopes']],
    ['BestEffort with cpu', { hard: { cpu: '1', pods: '1' }, scopes: ['BestEffort'] }, ['spec.hard: Invalid value: "cpu": unsupported scope applied to resource']],
    ['scoped services', { hard: { services: '1' }, scopes: ['Terminating'] }, ['spec.hard: Invalid value: "services": unsupported scope applied to resource']],
    ['In without values', { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } },
      ["spec.scopeSelector.matchExpressions[0].values: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"]],
  ];
  for (const [what, spec, want] of cases) assert.deepEqual(messages(validateResourceQuota({ spec })), want, what);
  assert.equal(validateResourceQuota({ spec: { scopes: ['CrossNamespacePodAffinity'] } })[0]?.type, 'FieldValueForbidden', 'an unsupported scope is refused, not ignored');
});

test('LimitRange: upstream defaults, then min ≤ default request ≤ default ≤ max and type rules', () => {
  const lr = { spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { memory: '10Mi' } }] } };
  defaultLimitRange(lr);
  assert.deepEqual(lr.spec.limits[0], { type: 'Container', max: { cpu: '2' }, min: { memory: '10Mi' }, default: { cpu: '2' }, defaultRequest: { cpu: '2', memory: '10Mi' } });
  const cases: Array<[string, unknown[], string[]]> = [
    ['valid', [{ type: 'Pod', max: { cpu: '4' } }, { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } }], []],
    ['min above max', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }], ['spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1']],
    ['default on Pod', [{ type: 'Pod', default: { cpu: '1' } }], ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]],
    ['ratio below 1', [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }], ['spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio must be greater than or equal to 1']],
    ['duplicate type', [{ type: 'Pod' }, { type: 'Pod' }], ['spec.limits[1].type: Duplicate value: "Pod"']],
    ['unknown type', [{ type: 'Node' }], ['spec.limits[0].type: Unsupported value: "Node": supported values: "Container", "PersistentVolumeClaim", "Pod"']],
  ];
  for (const [what, limits, want] of cases) assert.deepEqual(messages(validateLimitRange({ spec: { limits } })), want, what);
});

test('PriorityClass: reserved names, the user limit, immutable value', () => {
  const pc = (name: string, value: number, extra: Record<string, unknown> = {}) => ({ metadata: { name }, value, ...extra });
  assert.deepEqual(validatePriorityClass(pc('system-node-critical', 2000001000)), []);
  assert.deepEqual(messages(validatePriorityClass(pc('system-mine', 5))), ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"]);
  assert.deepEqual(messages(validatePriorityClass(pc('big', 1000000001))), ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000']);
  assert.deepEqual(messages(validatePriorityClass(pc('x', 2), pc('x', 1))), ['value: Forbidden: may not be changed in an update.']);
});
