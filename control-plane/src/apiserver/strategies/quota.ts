/**
 * Strategies of v1 ResourceQuota and LimitRange and scheduling.k8s.io/v1 PriorityClass
 * (pkg/registry/core/resourcequota, limitrange, scheduling/priorityclass): validation, LimitRange
 * defaults, and a quota's status kept out of spec writes (admission and the quota controller own it).
 */
import { defaultLimitRange, validateLimitRange, validatePriorityClass, validateResourceQuota } from '@nodelet/api';
import type { Strategy } from '../resource.js';

export const resourceQuotaStrategy: Strategy = {
  prepareForCreate(obj) {
    delete obj.status;
  },
  validate: (obj) => validateResourceQuota(obj),
};

export const limitRangeStrategy: Strategy = {
  defaults: (obj) => defaultLimitRange(obj),
  validate: (obj) => validateLimitRange(obj),
};

export const priorityClassStrategy: Strategy = {
  defaults(obj) {
    obj.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  validate: (obj, old) => validatePriorityClass(obj, old),
};
