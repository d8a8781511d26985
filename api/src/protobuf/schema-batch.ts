// k8s.io/api batch/v1 generated.proto: the Job and CronJob messages `kubectl create job|cronjob`
// (and `kubectl create job --from=cronjob/x`) send. Names and field numbers are upstream's.
import { META, kindMessage, specAndStatus } from './schema-shapes.js';

export const BATCH_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.batch.v1;

message PodFailurePolicyOnExitCodesRequirement {
  optional string containerName = 1;
  optional string operator = 2;
  repeated int32 values = 3;
}
message PodFailurePolicyOnPodConditionsPattern {
  optional string type = 1;
  optional string status = 2;
}
message PodFailurePolicyRule {
  optional string action = 1;
  optional PodFailurePolicyOnExitCodesRequirement onExitCodes = 2;
  repeated PodFailurePolicyOnPodConditionsPattern onPodConditions = 3;
}
message PodFailurePolicy { repeated PodFailurePolicyRule rules = 1; }
message SuccessPolicyRule {
  optional string succeededIndexes = 1;
  optional int32 succeededCount = 2;
}
message SuccessPolicy { repeated SuccessPolicyRule rules = 1; }

message JobSpec {
  optional int32 parallelism = 1;
  optional int32 completions = 2;
  optional int64 activeDeadlineSeconds = 3;
  optional ${META}.LabelSelector selector = 4;
  optional bool manualSelector = 5;
  optional k8s.io.api.core.v1.PodTemplateSpec template = 6;
  optional int32 backoffLimit = 7;
  optional int32 ttlSecondsAfterFinished = 8;
  optional string completionMode = 9;
  optional bool suspend = 10;
  optional PodFailurePolicy podFailurePolicy = 11;
  optional int32 backoffLimitPerIndex = 12;
  optional int32 maxFailedIndexes = 13;
  optional string podReplacementPolicy = 14;
  optional string managedBy = 15;
  optional SuccessPolicy successPolicy = 16;
}
${specAndStatus('Job')}
${kindMessage('JobTemplateSpec', { spec: 'JobSpec' })}
message CronJobSpec {
  optional string schedule = 1;
  optional int64 startingDeadlineSeconds = 2;
  optional string concurrencyPolicy = 3;
  optional bool suspend = 4;
  optional JobTemplateSpec jobTemplate = 5;
  optional int32 successfulJobsHistoryLimit = 6;
  optional int32 failedJobsHistoryLimit = 7;
  optional string timeZone = 8;
}
${specAndStatus('CronJob')}
`;
