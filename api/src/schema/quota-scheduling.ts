/** Schemas of v1 ResourceQuota and LimitRange and scheduling.k8s.io/v1 PriorityClass. */
import { bool, definitions, int32, kind, listOf, obj, quantities, ref, str, strings, type JsonSchema } from './dsl.js';

export const QUOTA_SCHEDULING_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('core', {
    ResourceQuota: kind('v1:ResourceQuota', 'A namespace’s budget: how much of each resource its objects may use together.', {
      spec: ref('core.ResourceQuotaSpec', 'The limits.'),
      status: ref('core.ResourceQuotaStatus', 'The limits as enforced and the usage counted so far. Read-only.'),
    }),
    ResourceQuotaSpec: obj('The hard limits of a quota and which objects it counts.', {
      hard: quantities('Resource name (`pods`, `requests.cpu`, `count/deployments.apps`, …) → the most the namespace may use.'),
      scopes: strings('Only objects matching every scope count: Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass.'),
      scopeSelector: ref('core.ScopeSelector', 'Scope expressions, ANDed (the PriorityClass scope with values).'),
    }),
    ScopeSelector: obj('Scope expressions of a quota.', {
      matchExpressions: listOf('core.ScopedResourceSelectorRequirement', 'The expressions, ANDed.', { type: 'atomic' }),
    }, { mapType: 'atomic' }),
    ScopedResourceSelectorRequirement: obj('A scope and, for PriorityClass, the class names it matches.', {
      scopeName: str('The scope.', { enum: ['BestEffort', 'CrossNamespacePodAffinity', 'NotBestEffort', 'NotTerminating', 'PriorityClass', 'Terminating'] }),
      operator: str('`In`, `NotIn`, `Exists` or `DoesNotExist`.', { enum: ['DoesNotExist', 'Exists', 'In', 'NotIn'] }),
      values: strings('Values for In and NotIn; empty for Exists and DoesNotExist.'),
    }, { required: ['scopeName', 'operator'] }),
    ResourceQuotaStatus: obj('What a quota enforces and what is used.', {
      hard: quantities('The limits as enforced.'),
      used: quantities('The usage counted in the namespace.'),
    }),
    LimitRange: kind('v1:LimitRange', 'Per-object bounds and defaults of compute and storage in a namespace.', {
      spec: ref('core.LimitRangeSpec', 'The limits.'),
    }),
    LimitRangeSpec: obj('The limits of a LimitRange.', {
      limits: listOf('core.LimitRangeItem', 'One entry per kind of object bounded.', { type: 'atomic' }),
    }, { required: ['limits'] }),
    LimitRangeItem: obj('Bounds of one kind of object: Container, Pod or PersistentVolumeClaim.', {
      type: str('What the bounds apply to.', { enum: ['Container', 'PersistentVolumeClaim', 'Pod'] }),
      max: quantities('The most an object may ask for (its limit).'),
      min: quantities('The least an object may ask for (its request).'),
      default: quantities('Limits given to containers that set none (Container only).'),
      defaultRequest: quantities('Requests given to containers that set none (Container only).'),
      maxLimitRequestRatio: quantities('The largest limit ÷ request allowed.'),
    }, { required: ['type'] }),
  }),
  ...definitions('scheduling', {
    PriorityClass: kind('scheduling.k8s.io/v1:PriorityClass', 'A name for a pod priority value; pods refer to it with spec.priorityClassName.', {
      value: int32('The priority of the pods of this class; at most 1000000000 for user-defined classes.'),
      globalDefault: bool('Pods that name no class get this one; at most one class may set it.'),
      description: str('What the class is for.'),
      preemptionPolicy: str('`PreemptLowerPriority` (default) or `Never`.', { enum: ['Never', 'PreemptLowerPriority'] }),
    }, { required: ['value'] }),
  }),
};
