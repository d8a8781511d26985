/**
 * core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1 StorageClass: the fields
 * kubectl shows and the local-path provisioner, scheduler and agent use; names are upstream's.
 */
import type { ObjectReference } from './core.js';
import type { KubeObject, LabelSelector, Time } from './meta.js';
import type { NodeSelector, Quantity } from './pod.js';

export type PersistentVolumeAccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';

export interface PersistentVolumeSpec {
  capacity?: Record<string, Quantity>;
  accessModes?: PersistentVolumeAccessMode[];
  claimRef?: ObjectReference;
  persistentVolumeReclaimPolicy?: 'Retain' | 'Delete' | 'Recycle';
  storageClassName?: string;
  volumeMode?: 'Filesystem' | 'Block';
  nodeAffinity?: { required?: NodeSelector };
  mountOptions?: string[];
  hostPath?: { path: string; type?: string };
  local?: { path: string; fsType?: string };
}

export interface PersistentVolumeStatus {
  phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed';
  message?: string;
  reason?: string;
  lastPhaseTransitionTime?: Time;
}

export interface PersistentVolume extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'PersistentVolume';
  spec?: PersistentVolumeSpec;
  status?: PersistentVolumeStatus;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: PersistentVolumeAccessMode[];
  selector?: LabelSelector;
  resources?: { requests?: Record<string, Quantity>; limits?: Record<string, Quantity> };
  volumeName?: string;
  storageClassName?: string;
  volumeMode?: 'Filesystem' | 'Block';
}

export interface PersistentVolumeClaimStatus {
  phase?: 'Pending' | 'Bound' | 'Lost';
  accessModes?: PersistentVolumeAccessMode[];
  capacity?: Record<string, Quantity>;
}

export interface PersistentVolumeClaim extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'PersistentVolumeClaim';
  spec?: PersistentVolumeClaimSpec;
  status?: PersistentVolumeClaimStatus;
}

export interface StorageClass extends KubeObject {
  apiVersion?: 'storage.k8s.io/v1';
  kind?: 'StorageClass';
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: 'Retain' | 'Delete';
  mountOptions?: string[];
  allowVolumeExpansion?: boolean;
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
}

/** Annotations of the PV controller, scheduler and provisioners (pkg/controller/volume/persistentvolume/util). */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
export const ANN_DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';
/**
 * nodelet: on a Node, the directory under which the local-path provisioner places that node's
 * volumes (the agent sets it to `<root-dir>/local-path` when it registers).
 */
export const LOCAL_PATH_DIR_ANNOTATION = 'nodelet.io/local-path-dir';
