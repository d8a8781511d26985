/**
 * Strategy of autoscaling/v2 HorizontalPodAutoscalers (pkg/registry/autoscaling/horizontalpodautoscaler):
 * defaults, a new autoscaler's status starts empty (desiredReplicas 0, the one field always on the
 * wire), spec and status validated as upstream. autoscaling/v1 is served over the same storage.
 */
import { defaultHorizontalPodAutoscaler, hpaFromV1, hpaToV1, validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from '@nodelet/api';
import type { ApiObject } from '../object.js';
import type { ResourceDef, Strategy, TablePrinter } from '../resource.js';
import { HORIZONTALPODAUTOSCALER_TABLE } from '../table/autoscaling.js';

const validateHpa = (obj: ApiObject) => [...validateHorizontalPodAutoscaler(obj), ...validateHorizontalPodAutoscalerStatus(obj)];

export const horizontalPodAutoscalerStrategy: Strategy = {
  defaults: (obj) => defaultHorizontalPodAutoscaler(obj),
  prepareForCreate(obj) {
    obj.status = { desiredReplicas: 0 };
  },
  validate: (obj) => validateHpa(obj),
};

/** The stored v2 form of a v1 autoscaler, with v2's defaults (80% CPU when v1 names no target). */
function toV2(obj: ApiObject): ApiObject {
  const v2 = hpaFromV1(obj) as ApiObject;
  defaultHorizontalPodAutoscaler(v2);
  return v2;
}

/** autoscaling/v1 autoscalers live in the v2 storage: converted on every read and write. */
export const HPA_V1_CODEC: NonNullable<ResourceDef['storageCodec']> = {
  fromStored: (o) => hpaToV1(o) as ApiObject,
  toStored: toV2,
};

/** The v1 strategy: v1's own default (minReplicas 1), then the v2 checks on the converted form. */
export const horizontalPodAutoscalerV1Strategy: Strategy = {
  defaults(obj) {
    if (obj.spec && typeof obj.spec === 'object') (obj.spec as Record<string, unknown>).minReplicas ??= 1;
  },
  prepareForCreate(obj) {
    obj.status = { desiredReplicas: 0 };
  },
  validate: (obj) => validateHpa(toV2(obj)),
};

/** v1 rows print as v2's (upstream's printer converts to the internal type first). */
export const HORIZONTALPODAUTOSCALER_V1_TABLE: TablePrinter = {
  columns: HORIZONTALPODAUTOSCALER_TABLE.columns,
  cells: (o, now) => HORIZONTALPODAUTOSCALER_TABLE.cells(toV2(o), now),
};
