/**
 * v1 ResourceQuota and LimitRange, and scheduling.k8s.io/v1 PriorityClass: the namespace budgets,
 * per-object bounds and pod priorities the API server's admission enforces. Names as in
 * k8s.io/api/core/v1 and k8s.io/api/scheduling/v1.
 */
import type { KubeObject } from './meta.js';
import type { Quantity } from './pod.js';

export type ResourceQuotaScope = 'Terminating' | 'NotTerminating' | 'BestEffort' | 'NotBestEffort' | 'PriorityClass' | 'CrossNamespacePodAffinity';

export interface ScopedResourceSelectorRequirement {
  scopeName: ResourceQuotaScope;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface ResourceQuotaSpec {
  /** Resource name (`pods`, `requests.cpu`, `count/deployments.apps`) → the most the namespace may use. */
  hard?: Record<string, Quantity>;
  /** Only objects matching every scope count. */
  scopes?: ResourceQuotaScope[];
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] };
}

export interface ResourceQuota extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'ResourceQuota';
  spec?: ResourceQuotaSpec;
  /** hard (as enforced) and used, kept by admission and the quota controller. */
  status?: { hard?: Record<string, Quantity>; used?: Record<string, Quantity> };
}

export type LimitType = 'Container' | 'Pod' | 'PersistentVolumeClaim';

export interface LimitRangeItem {
  type: LimitType;
  max?: Record<string, Quantity>;
  min?: Record<string, Quantity>;
  default?: Record<string, Quantity>;
  defaultRequest?: Record<string, Quantity>;
  maxLimitRequestRatio?: Record<string, Quantity>;
}

export interface LimitRange extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'LimitRange';
  spec?: { limits: LimitRangeItem[] };
}

export interface PriorityClass extends KubeObject {
  apiVersion?: 'scheduling.k8s.io/v1';
  kind?: 'PriorityClass';
  /** The priority pods of this class get; at most 1000000000 for user-defined classes. */
  value: number;
  /** Pods without a priorityClassName get this class (at most one class may say so). */
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: 'PreemptLowerPriority' | 'Never';
}
