/**
 * Strategy of autoscaling/v2 HorizontalPodAutoscalers (pkg/registry/autoscaling/horizontalpodautoscaler):
 * defaults, a new autoscaler's status starts empty (desiredReplicas 0, the one field always on the
 * wire), spec and status validated as upstream.
 */
import { defaultHorizontalPodAutoscaler, validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from '@nodelet/api';
import type { Strategy } from '../resource.js';

export const horizontalPodAutoscalerStrategy: Strategy = {
  defaults: (obj) => defaultHorizontalPodAutoscaler(obj),
  prepareForCreate(obj) {
    obj.status = { desiredReplicas: 0 };
  },
  validate: (obj) => [...validateHorizontalPodAutoscaler(obj), ...validateHorizontalPodAutoscalerStatus(obj)],
};
