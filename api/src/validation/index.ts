export * from './field-error.js';
export * from './names.js';
export { validatePodSpec } from './pod.js';
export * from './paths.js';
export { validatePodVolumes, validateVolumeMounts, validateVolumes } from './volumes.js';
export { selectorErrors, validateAlwaysRestartingSpec, validateReplicatedSpec, validateServiceSpec } from './workloads.js';
export { isKnownTimeZone, jobSpecUpdateErrors, validateCronJobSpec, validateJobSpec } from './batch.js';
export { validatePersistentVolume, validatePersistentVolumeClaimSpec, validateStorageClass } from './storage.js';
export * from './rbac.js';
