/** Schemas of batch/v1 Jobs and CronJobs. */
import { bool, definitions, int32, int64, kind, list, listOf, obj, ref, str, strings, type JsonSchema } from './dsl.js';

export const BATCH_SCHEMAS: Record<string, JsonSchema> = definitions('batch', {
  Job: kind('batch/v1:Job', 'Runs pods until a number of them succeeded.', {
    spec: ref('batch.JobSpec', 'The desired state.'),
    status: ref('batch.JobStatus', 'The observed state. Read-only.'),
  }),
  JobSpec: obj('What a Job runs and when it is done.', {
    parallelism: int32('Most pods running at once (default 1).'),
    completions: int32('Successful pods needed; unset: done when any pod succeeds and all stopped.'),
    activeDeadlineSeconds: int64('Seconds the Job may run, from its start, before it fails (DeadlineExceeded).'),
    podFailurePolicy: ref('batch.PodFailurePolicy', 'Rules that decide what a failed pod means, by exit code or condition.'),
    successPolicy: ref('batch.SuccessPolicy', 'When an Indexed Job may count as succeeded before all indexes did; not supported by this server (refused).'),
    backoffLimit: int32('Failed pods allowed before the Job fails (default 6).'),
    backoffLimitPerIndex: int32('Failures allowed per index of an Indexed Job; not supported by this server (refused).'),
    maxFailedIndexes: int32('Failed indexes allowed before the Job fails, with backoffLimitPerIndex; not supported by this server (refused).'),
    selector: ref('meta.LabelSelector', 'Pods of the Job; generated unless manualSelector.'),
    manualSelector: bool('Use the given selector instead of a generated one.'),
    template: ref('core.PodTemplateSpec', 'The pods to run; restartPolicy must be Never or OnFailure.'),
    ttlSecondsAfterFinished: int32('Delete the finished Job (and its pods) this many seconds after it completed or failed.'),
    completionMode: str('`NonIndexed` (default) or `Indexed`: each pod gets an index 0…completions-1.', { enum: ['Indexed', 'NonIndexed'] }),
    suspend: bool('While true, no pods run (running ones are deleted).'),
    podReplacementPolicy: str('When a replacement pod is made: `TerminatingOrFailed` or `Failed` (after the old one fully stopped).', { enum: ['Failed', 'TerminatingOrFailed'] }),
    managedBy: str('Controller in charge of the Job; only `kubernetes.io/job-controller` is supported by this server (others refused).'),
  }, { required: ['template'] }),
  PodFailurePolicy: obj('Rules for failed pods, checked in order.', {
    rules: listOf('batch.PodFailurePolicyRule', 'The rules; the first that matches applies.', { type: 'atomic' }),
  }, { required: ['rules'] }),
  PodFailurePolicyRule: obj('An action for pods that failed in a given way.', {
    action: str('`FailJob`, `FailIndex`, `Ignore` (not counted) or `Count` (counted as usual).', { enum: ['Count', 'FailIndex', 'FailJob', 'Ignore'] }),
    onExitCodes: ref('batch.PodFailurePolicyOnExitCodesRequirement', 'Match by container exit codes.'),
    onPodConditions: listOf('batch.PodFailurePolicyOnPodConditionsPattern', 'Match by pod conditions.', { type: 'atomic' }),
  }, { required: ['action'] }),
  PodFailurePolicyOnExitCodesRequirement: obj('Exit codes of a failed pod’s containers.', {
    containerName: str('Only this container; all when empty.'),
    operator: str('`In` or `NotIn`.', { enum: ['In', 'NotIn'] }),
    values: list({ type: 'integer', format: 'int32', default: 0 }, 'The exit codes (0 only with NotIn).', { type: 'set' }),
  }, { required: ['operator', 'values'] }),
  PodFailurePolicyOnPodConditionsPattern: obj('A condition of a failed pod.', {
    type: str('Condition type, e.g. DisruptionTarget.'),
    status: str('Condition status (default True).'),
  }, { required: ['type'] }),
  SuccessPolicy: obj('When an Indexed Job succeeds early.', {
    rules: listOf('batch.SuccessPolicyRule', 'Any rule that holds makes the Job succeed.', { type: 'atomic' }),
  }, { required: ['rules'] }),
  SuccessPolicyRule: obj('A set of indexes that must succeed.', {
    succeededIndexes: str('Indexes, e.g. `0-2,5`.'),
    succeededCount: int32('How many of them must succeed.'),
  }),
  JobStatus: obj('The observed state of a Job.', {
    conditions: listOf('batch.JobCondition', 'Complete, Failed, Suspended, FailureTarget, SuccessCriteriaMet.', { type: 'atomic', merge: 'type' }),
    startTime: ref('meta.Time', 'When the controller started the Job (or resumed it).'),
    completionTime: ref('meta.Time', 'When the Job completed successfully.'),
    active: int32('Pods running or pending.'),
    succeeded: int32('Pods that succeeded.'),
    failed: int32('Pods that failed.'),
    terminating: int32('Pods terminating.'),
    completedIndexes: str('Indexes that succeeded, e.g. `1,3-5`.'),
    failedIndexes: str('Indexes that failed, with backoffLimitPerIndex.'),
    uncountedTerminatedPods: ref('batch.UncountedTerminatedPods', 'Finished pods not yet counted.'),
    ready: int32('Pods ready.'),
  }),
  JobCondition: obj('A condition of a Job.', {
    type: str('Type of condition.'),
    status: str('`True`, `False` or `Unknown`.'),
    lastProbeTime: ref('meta.Time', 'When it was last checked.'),
    lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
    reason: str('Brief reason, e.g. BackoffLimitExceeded.'),
    message: str('Details.'),
  }, { required: ['type', 'status'] }),
  UncountedTerminatedPods: obj('UIDs of finished pods the controller has not counted yet.', {
    succeeded: strings('Succeeded pods.', { type: 'set' }),
    failed: strings('Failed pods.', { type: 'set' }),
  }),
  CronJob: kind('batch/v1:CronJob', 'Creates Jobs on a schedule.', {
    spec: ref('batch.CronJobSpec', 'The desired state.'),
    status: ref('batch.CronJobStatus', 'The observed state. Read-only.'),
  }),
  CronJobSpec: obj('When and what a CronJob runs.', {
    schedule: str('Cron schedule, e.g. `*/5 * * * *` or `@hourly`.'),
    timeZone: str('IANA time zone of the schedule; the controller’s local zone when unset.'),
    startingDeadlineSeconds: int64('Seconds after a missed time that the Job may still start.'),
    concurrencyPolicy: str('`Allow` (default), `Forbid` (skip while one runs) or `Replace` (stop the running one).', { enum: ['Allow', 'Forbid', 'Replace'] }),
    suspend: bool('While true, no new Jobs start.'),
    jobTemplate: ref('batch.JobTemplateSpec', 'The Jobs to create.'),
    successfulJobsHistoryLimit: int32('Finished successful Jobs kept (default 3).'),
    failedJobsHistoryLimit: int32('Failed Jobs kept (default 1).'),
  }, { required: ['schedule', 'jobTemplate'] }),
  JobTemplateSpec: obj('The template of a CronJob’s Jobs.', {
    metadata: ref('meta.ObjectMeta', 'Labels and annotations of the Jobs.'),
    spec: ref('batch.JobSpec', 'Spec of the Jobs.'),
  }),
  CronJobStatus: obj('The observed state of a CronJob.', {
    active: listOf('core.ObjectReference', 'Jobs running now.', { type: 'atomic' }),
    lastScheduleTime: ref('meta.Time', 'When a Job was last scheduled.'),
    lastSuccessfulTime: ref('meta.Time', 'When a Job last completed successfully.'),
  }),
});
