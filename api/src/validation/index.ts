export * from './field-error.js';
export * from './names.js';
export { validatePodSpec } from './pod.js';
export { validateReplicatedSpec, validateServiceSpec } from './workloads.js';
export * from './rbac.js';
