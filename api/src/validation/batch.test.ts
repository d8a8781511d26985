import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateCronJobSpec, validateJobSpec } from './batch.js';

const job = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  selector: { matchLabels: { a: 'b' } },
  template: { metadata: { labels: { a: 'b' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
  ...extra,
});

test('Job fields nothing here acts on are refused (422 Forbidden), not stored and ignored', () => {
  assert.deepEqual(validateJobSpec(job()), []);
  assert.deepEqual(validateJobSpec(job({ managedBy: 'kubernetes.io/job-controller' })), []);
  const errs = validateJobSpec(job({ completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1, maxFailedIndexes: 1, successPolicy: { rules: [{ succeededCount: 1 }] }, managedBy: 'example.com/other' }));
  assert.deepEqual(errs.map((e) => `${e.field}: ${e.message}`), [
    'spec.backoffLimitPerIndex: Forbidden: not supported by this server',
    'spec.maxFailedIndexes: Forbidden: not supported by this server',
    'spec.successPolicy: Forbidden: not supported by this server',
    'spec.managedBy: Forbidden: not supported by this server: only "kubernetes.io/job-controller" runs Jobs here',
  ]);
  // A CronJob's job template is held to the same.
  const cron = validateCronJobSpec({ schedule: '* * * * *', jobTemplate: { spec: job({ backoffLimitPerIndex: 1 }) } }, 'c');
  assert.deepEqual(cron.map((e) => e.field), ['spec.jobTemplate.spec.backoffLimitPerIndex']);
});
