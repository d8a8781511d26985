/** Defaults of batch/v1 Job and CronJob (k8s.io/kubernetes/pkg/apis/batch/v1/defaults.go). */
import { defaultPodSpec } from './pod.js';

type Obj = Record<string, unknown>;

function defaultTemplate(spec: Obj): void {
  const template = spec.template as Obj | undefined;
  if (template?.spec && typeof template.spec === 'object') defaultPodSpec(template.spec as Obj);
}

/** SetDefaults_Job; `meta` gets the template's labels when it has none. */
export function defaultJobSpec(spec: Obj, meta?: { labels?: Record<string, string> }): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  const pfp = spec.podFailurePolicy as { rules?: Array<{ onPodConditions?: Array<{ status?: string }> }> } | undefined;
  for (const rule of pfp?.rules ?? []) for (const c of rule.onPodConditions ?? []) c.status ||= 'True';
  spec.podReplacementPolicy ??= pfp ? 'Failed' : 'TerminatingOrFailed';
  const labels = ((spec.template as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
  if (meta && labels && Object.keys(meta.labels ?? {}).length === 0) meta.labels = { ...labels };
  defaultTemplate(spec);
}

/** SetDefaults_CronJob plus the defaults of the job template's pod spec (not the Job's own). */
export function defaultCronJobSpec(spec: Obj): void {
  spec.concurrencyPolicy ??= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const jt = spec.jobTemplate as Obj | undefined;
  if (jt?.spec && typeof jt.spec === 'object') defaultTemplate(jt.spec as Obj);
}
