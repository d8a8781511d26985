import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultReplicationController, validatePodTemplate, validateReplicationController } from './replication.js';

const messages = (errs: Array<{ field: string; message: string }>): string[] => errs.map((e) => `${e.field}: ${e.message}`);
const template = (labels: Record<string, string>, restartPolicy = 'Always'): Record<string, unknown> => ({
  metadata: { labels },
  spec: { restartPolicy, dnsPolicy: 'ClusterFirst', containers: [{ name: 'a', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }] },
});

test('ReplicationController: selector defaults from the template, must match it, restartPolicy Always', () => {
  const rc: Record<string, unknown> = { metadata: { name: 'web' }, spec: { template: template({ app: 'web' }) } };
  defaultReplicationController(rc);
  assert.deepEqual((rc.spec as Record<string, unknown>).selector, { app: 'web' });
  assert.deepEqual((rc.metadata as Record<string, unknown>).labels, { app: 'web' });
  assert.equal((rc.spec as Record<string, unknown>).replicas, 1);
  assert.deepEqual(validateReplicationController(rc), []);
  assert.deepEqual(messages(validateReplicationController({ spec: { selector: { app: 'x' }, template: template({ app: 'web' }) } })), [
    'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
  ]);
  assert.deepEqual(messages(validateReplicationController({ spec: { template: template({}) } })), ['spec.selector: Required value']);
  assert.deepEqual(messages(validateReplicationController({ spec: { selector: { app: 'web' }, template: template({ app: 'web' }, 'Never') } })), [
    'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
  ]);
  assert.deepEqual(messages(validateReplicationController({ spec: { replicas: -1, selector: { app: 'web' }, template: template({ app: 'web' }) } })), [
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
  ]);
});

test('PodTemplate: a template is required; its pod spec is validated', () => {
  assert.deepEqual(messages(validatePodTemplate({})), ['template: Required value']);
  assert.ok(messages(validatePodTemplate({ template: { spec: { containers: [] } } })).some((m) => m.startsWith('template.spec.containers: Required value')));
});
