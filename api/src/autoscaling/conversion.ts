/**
 * autoscaling/v1 HorizontalPodAutoscaler ⇄ autoscaling/v2, as upstream converts through the internal
 * type (pkg/apis/autoscaling/v1/conversion.go): v1 `spec.targetCPUUtilizationPercentage` is the v2
 * Resource cpu metric with a Utilization target, v1 `status.currentCPUUtilizationPercentage` the
 * matching current metric. What v1 cannot hold (other metrics, behavior, conditions, other current
 * metrics) rides in annotations of the v1 form (metrics in v1's older shape, v1-metrics.ts) so a
 * v1 read-modify-write keeps it. Both versions are served from one storage, which holds the v2 form.
 */
import { metricSpecsFromV1, metricSpecsToV1, metricStatusesFromV1, metricStatusesToV1 } from './v1-metrics.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Annotations of the v1 form carrying v2-only fields (upstream's names). */
export const HPA_V1_ANNOTATIONS = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
} as const;

/** A v2 metric (spec or status) that v1's CPU percentage stands for: Resource cpu by utilization. */
function isCpuUtilization(m: unknown, key: 'target' | 'current'): boolean {
  if (!isObj(m) || m.type !== 'Resource' || !isObj(m.resource) || m.resource.name !== 'cpu') return false;
  const v = m.resource[key];
  return key === 'target' ? isObj(v) && v.type === 'Utilization' && typeof v.averageUtilization === 'number'
    : isObj(v) && typeof v.averageUtilization === 'number';
}

function cpuUtilization(m: unknown, key: 'target' | 'current'): number {
  return ((m as { resource: Obj }).resource[key] as { averageUtilization: number }).averageUtilization;
}

/** Annotations parsed back; one that is not valid JSON of the right shape is dropped, as upstream ignores it. */
function takeJson(annotations: Obj, key: string, array: boolean): unknown {
  const raw = annotations[key];
  delete annotations[key];
  if (typeof raw !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return (array ? Array.isArray(v) : isObj(v)) ? v : undefined;
  } catch {
    return undefined;
  }
}

function withMetadata(from: Obj, annotations: Obj): Obj {
  const meta: Obj = isObj(from.metadata) ? { ...from.metadata } : {};
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  return meta;
}

/** The stored v2 form of a v1 HorizontalPodAutoscaler; the annotations of v2-only fields move back into place. */
export function hpaFromV1(v1: Obj): Obj {
  const annotations: Obj = isObj(v1.metadata) && isObj(v1.metadata.annotations) ? { ...v1.metadata.annotations } : {};
  const otherMetrics = takeJson(annotations, HPA_V1_ANNOTATIONS.metrics, true) as unknown[] | undefined;
  const behavior = takeJson(annotations, HPA_V1_ANNOTATIONS.behavior, false);
  const conditions = takeJson(annotations, HPA_V1_ANNOTATIONS.conditions, true);
  const otherCurrent = takeJson(annotations, HPA_V1_ANNOTATIONS.currentMetrics, true) as unknown[] | undefined;
  const out: Obj = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: withMetadata(v1, annotations) };
  if (isObj(v1.spec)) {
    const { targetCPUUtilizationPercentage: cpu, ...rest } = v1.spec;
    const metrics: unknown[] = [];
    if (typeof cpu === 'number') metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } });
    if (otherMetrics) metrics.push(...metricSpecsFromV1(otherMetrics));
    out.spec = { ...rest, ...(metrics.length > 0 ? { metrics } : {}), ...(behavior ? { behavior } : {}) };
  }
  if (isObj(v1.status)) {
    const { currentCPUUtilizationPercentage: cpu, ...rest } = v1.status;
    const current: unknown[] = [];
    if (typeof cpu === 'number') current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cpu } } });
    if (otherCurrent) current.push(...metricStatusesFromV1(otherCurrent));
    out.status = { ...rest, ...(current.length > 0 ? { currentMetrics: current } : {}), ...(conditions ? { conditions } : {}) };
  }
  return out;
}

/** The v1 form of a stored v2 HorizontalPodAutoscaler; what v1 has no field for goes into annotations. */
export function hpaToV1(v2: Obj): Obj {
  const annotations: Obj = isObj(v2.metadata) && isObj(v2.metadata.annotations) ? { ...v2.metadata.annotations } : {};
  const out: Obj = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler' };
  if (isObj(v2.spec)) {
    const { metrics, behavior, ...rest } = v2.spec;
    const list = Array.isArray(metrics) ? metrics : [];
    const cpuAt = list.findIndex((m) => isCpuUtilization(m, 'target'));
    const others = list.filter((_, i) => i !== cpuAt);
    if (others.length > 0) annotations[HPA_V1_ANNOTATIONS.metrics] = JSON.stringify(metricSpecsToV1(others));
    if (behavior !== undefined) annotations[HPA_V1_ANNOTATIONS.behavior] = JSON.stringify(behavior);
    out.spec = { ...rest, ...(cpuAt >= 0 ? { targetCPUUtilizationPercentage: cpuUtilization(list[cpuAt], 'target') } : {}) };
  }
  if (isObj(v2.status)) {
    const { currentMetrics, conditions, ...rest } = v2.status;
    const list = Array.isArray(currentMetrics) ? currentMetrics : [];
    const cpuAt = list.findIndex((m) => isCpuUtilization(m, 'current'));
    const others = list.filter((_, i) => i !== cpuAt);
    if (others.length > 0) annotations[HPA_V1_ANNOTATIONS.currentMetrics] = JSON.stringify(metricStatusesToV1(others));
    if (Array.isArray(conditions) && conditions.length > 0) annotations[HPA_V1_ANNOTATIONS.conditions] = JSON.stringify(conditions);
    out.status = { ...rest, ...(cpuAt >= 0 ? { currentCPUUtilizationPercentage: cpuUtilization(list[cpuAt], 'current') } : {}) };
  }
  out.metadata = withMetadata(v2, annotations);
  return out;
}
