/** apps/v1 Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision; autoscaling/v1 Scale. */
import type { Condition, KubeObject, LabelSelector } from './meta.js';
import type { PodTemplateSpec } from './pod.js';
import type { PersistentVolumeClaim } from './storage.js';

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

export interface DaemonSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
}

export interface DaemonSetSpec {
  selector: LabelSelector;
  template: PodTemplateSpec;
  updateStrategy?: DaemonSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: Array<Omit<Condition, 'observedGeneration'>>;
}

export interface DaemonSet extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'DaemonSet';
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}

export interface StatefulSetUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: { partition?: number; maxUnavailable?: number | string };
}

export interface StatefulSetSpec {
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  volumeClaimTemplates?: PersistentVolumeClaim[];
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: StatefulSetUpdateStrategy;
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: 'Retain' | 'Delete'; whenScaled?: 'Retain' | 'Delete' };
  ordinals?: { start?: number };
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  conditions?: Array<Omit<Condition, 'observedGeneration'>>;
  availableReplicas?: number;
}

export interface StatefulSet extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'StatefulSet';
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

/** apps/v1 ControllerRevision: an immutable snapshot of a DaemonSet's or StatefulSet's template. */
export interface ControllerRevision extends KubeObject {
  apiVersion?: 'apps/v1';
  kind?: 'ControllerRevision';
  data?: unknown;
  revision: number;
}

/**
 * v1 ReplicationController: a ReplicaSet whose selector is a plain label map (the one controller
 * implementation serves both, see control-plane/src/controllers/replicaset).
 */
export interface ReplicationController extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'ReplicationController';
  spec?: { replicas?: number; minReadySeconds?: number; selector?: Record<string, string>; template?: PodTemplateSpec };
  status?: ReplicaSetStatus;
}

/** v1 PodTemplate: a stored pod template. */
export interface PodTemplate extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'PodTemplate';
  template?: PodTemplateSpec;
}
