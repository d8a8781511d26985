export { admitNewPodSpec, defaultRequestsFromLimits, defaultPodSpec, defaultContainer, pullPolicyFor } from './pod.js';
export {
  defaultDaemonSetSpec,
  defaultDeploymentSpec,
  defaultPersistentVolumeClaimSpec,
  defaultPersistentVolumeSpec,
  defaultReplicaSetSpec,
  defaultServiceSpec,
  defaultStatefulSetSpec,
} from './workloads.js';
export { defaultCronJobSpec, defaultJobSpec } from './batch.js';
