/** batch/v1 Job and CronJob: JSON names and optionality as in k8s.io/api/batch/v1. */
import type { Condition, KubeObject, LabelSelector, ObjectMeta, Time } from './meta.js';
import type { PodTemplateSpec } from './pod.js';

export interface PodFailurePolicyOnExitCodesRequirement {
  containerName?: string;
  operator: 'In' | 'NotIn';
  values: number[];
}

export interface PodFailurePolicyOnPodConditionsPattern {
  type: string;
  status: 'True' | 'False' | 'Unknown';
}

export interface PodFailurePolicyRule {
  action: 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';
  onExitCodes?: PodFailurePolicyOnExitCodesRequirement;
  onPodConditions?: PodFailurePolicyOnPodConditionsPattern[];
}

export interface PodFailurePolicy {
  rules: PodFailurePolicyRule[];
}

export interface SuccessPolicyRule {
  succeededIndexes?: string;
  succeededCount?: number;
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  activeDeadlineSeconds?: number;
  podFailurePolicy?: PodFailurePolicy;
  successPolicy?: { rules: SuccessPolicyRule[] };
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  selector?: LabelSelector;
  manualSelector?: boolean;
  template: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
  podReplacementPolicy?: 'TerminatingOrFailed' | 'Failed';
  managedBy?: string;
}

export type JobConditionType = 'Suspended' | 'Complete' | 'Failed' | 'FailureTarget' | 'SuccessCriteriaMet';

export interface JobCondition extends Omit<Condition, 'observedGeneration'> {
  type: JobConditionType | string;
  lastProbeTime?: Time;
}

export interface UncountedTerminatedPods {
  succeeded?: string[];
  failed?: string[];
}

export interface JobStatus {
  conditions?: JobCondition[];
  startTime?: Time;
  completionTime?: Time;
  active?: number;
  succeeded?: number;
  failed?: number;
  terminating?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  uncountedTerminatedPods?: UncountedTerminatedPods;
  ready?: number;
}

export interface Job extends KubeObject {
  apiVersion?: 'batch/v1';
  kind?: 'Job';
  spec?: JobSpec;
  status?: JobStatus;
}

export interface JobTemplateSpec {
  metadata?: ObjectMeta;
  spec?: JobSpec;
}

export interface CronJobSpec {
  schedule: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  suspend?: boolean;
  jobTemplate: JobTemplateSpec;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
}

export interface CronJobStatus {
  active?: Array<{ apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string; resourceVersion?: string }>;
  lastScheduleTime?: Time;
  lastSuccessfulTime?: Time;
}

export interface CronJob extends KubeObject {
  apiVersion?: 'batch/v1';
  kind?: 'CronJob';
  spec?: CronJobSpec;
  status?: CronJobStatus;
}
