/** apps/v1 Deployment and ReplicaSet, autoscaling/v1 Scale. */
import type { Condition, KubeObject, LabelSelector } from './meta.js';
import type { PodTemplateSpec } from './pod.js';

export interface DeploymentStrategy {
  type?: 'RollingUpdate' | 'Recreate';
  rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
}

export interface DeploymentSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

export interface DeploymentCondition extends Omit<Condition, 'observedGeneration'> {
  type: 'Available' | 'Progressing' | 'ReplicaFailure' | string;
  lastUpdateTime?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export interface Deployment extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'Deployment';
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

export interface ReplicaSetSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector: LabelSelector;
  template?: PodTemplateSpec;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: Array<Omit<Condition, 'observedGeneration'>>;
}

export interface ReplicaSet extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'ReplicaSet';
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

/** The `/scale` subresource body of deployments and replicasets. */
export interface Scale extends KubeObject {
  apiVersion?: 'autoscaling/v1';
  kind?: 'Scale';
  spec?: { replicas?: number };
  /** `selector` is the label selector in string form (`app=web`). */
  status?: { replicas: number; selector?: string };
}
