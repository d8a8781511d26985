export * from './field-error.js';
export * from './names.js';
export { validatePodSpec } from './pod.js';
export * from './paths.js';
export { validatePodVolumes, validateVolumeMounts, validateVolumes } from './volumes.js';
export { validateReplicatedSpec, validateServiceSpec } from './workloads.js';
export * from './rbac.js';
