/**
 * meta.k8s.io/v1 shapes shared by every object: field names are exactly the JSON names of the
 * Kubernetes API (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), so objects round-trip unchanged
 * through kubectl and client-node.
 */

/** RFC 3339 timestamp string, e.g. `2026-01-01T00:00:00Z` (client-node sends `.000Z`). */
export type Time = string;

export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update' | string;
  apiVersion?: string;
  time?: Time;
  fieldsType?: 'FieldsV1' | string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  /** Opaque to clients: compare only for equality, never numerically. */
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Any top-level object: TypeMeta + metadata. */
export interface KubeObject extends TypeMeta {
  metadata: ObjectMeta;
}

export interface KubeList<T> extends TypeMeta {
  metadata: ListMeta;
  items: T[];
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The error (and some success) reply of every Kubernetes endpoint. */
export interface Status extends TypeMeta {
  kind?: 'Status';
  metadata?: ListMeta;
  status?: 'Success' | 'Failure';
  message?: string;
  /** Machine-readable: NotFound, AlreadyExists, Conflict, Expired, Invalid, Unauthorized, … */
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** The structured selector of Deployments, ReplicaSets, affinity terms. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions extends TypeMeta {
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  dryRun?: string[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One line of a watch stream. For ERROR the object is a {@link Status} (410 Expired after
 * compaction); for BOOKMARK only `metadata.resourceVersion` is meaningful.
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: Status };
