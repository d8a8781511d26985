export { admitNewPodSpec, defaultPodSpec, defaultContainer, pullPolicyFor } from './pod.js';
export { defaultDeploymentSpec, defaultReplicaSetSpec, defaultServiceSpec } from './workloads.js';
