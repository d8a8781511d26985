/** The pods a Job creates: its template, a controller reference, the tracking finalizer and, for Indexed Jobs, the index. */
import type { Container, Job, Pod } from '@nodelet/api';
import { newControllerRef } from '../util/pods.js';
import { COMPLETION_INDEX_ENV, COMPLETION_INDEX_KEY } from './indexes.js';
import { JOB_TRACKING_FINALIZER } from './policy.js';

/** Generated names are cut so `<prefix><5 chars>` stays a valid 63-character name (upstream maxGeneratedNameLength). */
function generateNamePrefix(base: string): string {
  const max = 63 - 5;
  return base.length > max ? base.slice(0, max) : base;
}

function addIndexEnv(c: Container): void {
  if ((c.env ?? []).some((e) => e.name === COMPLETION_INDEX_ENV)) return;
  c.env = [...(c.env ?? []), { name: COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX_KEY}']` } } }];
}

/**
 * A new pod of `job` (`generateName` `<job>-`, or `<job>-<index>-` for an Indexed Job, whose pod
 * also gets the index annotation and label, `JOB_COMPLETION_INDEX` in every container and the
 * hostname `<job>-<index>` unless the template names one).
 */
export function podForJob(job: Job, index?: number): Pod {
  const t = job.spec?.template;
  const name = job.metadata.name ?? '';
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: generateNamePrefix(index === undefined ? `${name}-` : `${name}-${index}-`),
      namespace: job.metadata.namespace,
      labels: { ...(t?.metadata?.labels ?? {}) },
      annotations: { ...(t?.metadata?.annotations ?? {}) },
      finalizers: [JOB_TRACKING_FINALIZER],
      ownerReferences: [newControllerRef(job, 'batch/v1', 'Job')],
    },
    spec: structuredClone(t?.spec ?? { containers: [] }),
  };
  if (index !== undefined) {
    pod.metadata.annotations![COMPLETION_INDEX_KEY] = String(index);
    pod.metadata.labels![COMPLETION_INDEX_KEY] = String(index);
    const spec = pod.spec!;
    if (!spec.hostname) spec.hostname = `${name}-${index}`.slice(0, 63).replace(/[-.]+$/, '');
    for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) addIndexEnv(c);
  }
  if (Object.keys(pod.metadata.annotations!).length === 0) delete pod.metadata.annotations;
  return pod;
}
