/** Schemas of autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscaler. */
import { definitions, int32, int64, kind, listOf, obj, ref, str, time, type JsonSchema } from './dsl.js';

const quantity = (description: string): JsonSchema => ref('resource.Quantity', description);

// What v2 and v1 share field for field (the conversion copies them as they are).
const scaleBounds = (group: string): Record<string, JsonSchema> => ({
  scaleTargetRef: ref(`${group}.CrossVersionObjectReference`, 'The object scaled (its /scale subresource) and whose pods are measured.'),
  minReplicas: int32('The fewest replicas the autoscaler sets; defaults to 1.'),
  maxReplicas: int32('The most replicas the autoscaler sets; not below minReplicas.'),
});
const REPLICAS_STATUS: Record<string, JsonSchema> = {
  observedGeneration: int64('The generation the autoscaler last acted on.'),
  lastScaleTime: time('When the autoscaler last changed the replica count.'),
  currentReplicas: int32('The replicas the target had when last read.'),
  desiredReplicas: int32('The replicas last asked for.'),
};
const CROSS_VERSION_OBJECT_REFERENCE = obj('The kind, name and apiVersion of an object in the same namespace.', {
  kind: str('Kind of the referent.'),
  name: str('Name of the referent.'),
  apiVersion: str('API version of the referent.'),
}, { required: ['kind', 'name'], mapType: 'atomic' });

/**
 * The five metric kinds. What identifies a kind's metric is the same in its source (in the spec,
 * with a `target`) and in its status (the value last read, with `current`): both are made from it.
 */
const METRIC_KINDS: ReadonlyArray<{ kind: string; field: string; what: string; identity: Record<string, JsonSchema>; required: string[] }> = [
  { kind: 'Resource', field: 'resource', what: 'a resource of the pods (cpu, memory), averaged over them', identity: { name: str('The resource (cpu, memory).') }, required: ['name'] },
  {
    kind: 'ContainerResource', field: 'containerResource', what: 'a resource of one container of each pod',
    identity: { name: str('The resource (cpu, memory).'), container: str('The container’s name.') }, required: ['name', 'container'],
  },
  { kind: 'Pods', field: 'pods', what: 'a custom metric of each pod, averaged', identity: { metric: ref('autoscalingv2.MetricIdentifier', 'The metric.') }, required: ['metric'] },
  {
    kind: 'Object', field: 'object', what: 'a custom metric describing another object',
    identity: { describedObject: ref('autoscalingv2.CrossVersionObjectReference', 'The object.'), metric: ref('autoscalingv2.MetricIdentifier', 'The metric.') },
    required: ['describedObject', 'metric'],
  },
  { kind: 'External', field: 'external', what: 'a metric from outside the cluster, tied to no object', identity: { metric: ref('autoscalingv2.MetricIdentifier', 'The metric.') }, required: ['metric'] },
];
const TYPES = METRIC_KINDS.map((k) => k.kind).sort();
const sentence = (what: string): string => `${what[0]!.toUpperCase()}${what.slice(1)}.`;

/** MetricSpec and MetricStatus (a `type` and one field per kind), and each kind's source and status. */
function metricDefinitions(): Record<string, JsonSchema> {
  const union = (suffix: 'Source' | 'Status', describe: (what: string) => string) => ({
    type: str('Which of the fields is set.', { enum: TYPES }),
    ...Object.fromEntries(METRIC_KINDS.map((k) => [k.field, ref(`autoscalingv2.${k.kind}Metric${suffix}`, describe(k.what))])),
  });
  const out: Record<string, JsonSchema> = {
    MetricSpec: obj('One metric to scale on: type and the matching source field.', union('Source', sentence), { required: ['type'] }),
    MetricStatus: obj('The last read value of one metric.', union('Status', (what) => `The value last read of ${what}.`), { required: ['type'] }),
  };
  for (const k of METRIC_KINDS) {
    out[`${k.kind}MetricSource`] = obj(sentence(k.what), { ...k.identity, target: ref('autoscalingv2.MetricTarget', 'The target value.') }, { required: [...k.required, 'target'] });
    out[`${k.kind}MetricStatus`] = obj(`The value last read of ${k.what}.`, { ...k.identity, current: ref('autoscalingv2.MetricValueStatus', 'The value.') }, { required: [...k.required, 'current'] });
  }
  return out;
}

export const AUTOSCALING_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('autoscalingv2', {
    HorizontalPodAutoscaler: kind('autoscaling/v2:HorizontalPodAutoscaler', 'Scales a target through its scale subresource from the metrics of its pods.', {
      spec: ref('autoscalingv2.HorizontalPodAutoscalerSpec', 'What to scale, within which bounds, on which metrics.'),
      status: ref('autoscalingv2.HorizontalPodAutoscalerStatus', 'What the autoscaler last saw and decided. Read-only.'),
    }),
    HorizontalPodAutoscalerSpec: obj('The target, bounds, metrics and scaling behaviour of an autoscaler.', {
      ...scaleBounds('autoscalingv2'),
      metrics: listOf('autoscalingv2.MetricSpec', 'The metrics; the largest replica count any of them asks for wins. Defaults to 80% average CPU utilization.', { type: 'atomic' }),
      behavior: ref('autoscalingv2.HorizontalPodAutoscalerBehavior', 'Rate limits and stabilization of scaling up and down.'),
    }, { required: ['scaleTargetRef', 'maxReplicas'] }),
    CrossVersionObjectReference: CROSS_VERSION_OBJECT_REFERENCE,
    ...metricDefinitions(),
    MetricIdentifier: obj('A metric’s name and label selector.', {
      name: str('The metric’s name.'),
      selector: ref('meta.LabelSelector', 'Narrows the metric’s series.'),
    }, { required: ['name'] }),
    MetricTarget: obj('The target of a metric: a value, an average value or an average utilization.', {
      type: str('Which of the fields is the target.', { enum: ['AverageValue', 'Utilization', 'Value'] }),
      value: quantity('The target value of the metric.'),
      averageValue: quantity('The target of the metric averaged over the pods.'),
      averageUtilization: int32('The target average as a percentage of the pods’ requests (resource metrics only).'),
    }, { required: ['type'] }),
    MetricValueStatus: obj('The current value of a metric.', {
      value: quantity('The current value.'),
      averageValue: quantity('The current average over the pods.'),
      averageUtilization: int32('The current average as a percentage of the pods’ requests.'),
    }),
    HorizontalPodAutoscalerBehavior: obj('Scaling rules of each direction.', {
      scaleUp: ref('autoscalingv2.HPAScalingRules', 'Rules of scaling up; default: no stabilization, the larger of 100% and 4 pods per 15 s.'),
      scaleDown: ref('autoscalingv2.HPAScalingRules', 'Rules of scaling down; default: 300 s stabilization, 100% per 15 s.'),
    }),
    HPAScalingRules: obj('The stabilization window and rate limits of one direction.', {
      stabilizationWindowSeconds: int32('How far back recommendations count (0-3600).'),
      selectPolicy: str('Which policy limit applies: Max (default), Min or Disabled.', { enum: ['Disabled', 'Max', 'Min'] }),
      policies: listOf('autoscalingv2.HPAScalingPolicy', 'The rate limits.', { type: 'atomic' }),
    }),
    HPAScalingPolicy: obj('A change allowed within a period.', {
      type: str('Pods or Percent.', { enum: ['Percent', 'Pods'] }),
      value: int32('The change allowed; above 0.'),
      periodSeconds: int32('The period (1-1800 s).'),
    }, { required: ['type', 'value', 'periodSeconds'] }),
    HorizontalPodAutoscalerStatus: obj('What the autoscaler last saw and decided.', {
      ...REPLICAS_STATUS,
      currentMetrics: listOf('autoscalingv2.MetricStatus', 'The metrics as last read.', { type: 'atomic' }),
      conditions: listOf('autoscalingv2.HorizontalPodAutoscalerCondition', 'AbleToScale, ScalingActive and ScalingLimited.', { type: 'map', keys: ['type'], merge: 'type' }),
    }, { required: ['desiredReplicas'] }),
    HorizontalPodAutoscalerCondition: obj('A state of the autoscaler.', {
      type: str('AbleToScale, ScalingActive or ScalingLimited.'),
      status: str('True, False or Unknown.'),
      lastTransitionTime: time('When the status last changed.'),
      reason: str('Why, in CamelCase.'),
      message: str('Why, for people.'),
    }, { required: ['type', 'status'] }),
  }),
  ...definitions('autoscalingv1', {
    HorizontalPodAutoscaler: kind('autoscaling/v1:HorizontalPodAutoscaler', 'The v1 form of an autoscaler: CPU utilization only; v2-only fields ride in annotations.', {
      spec: ref('autoscalingv1.HorizontalPodAutoscalerSpec', 'What to scale, within which bounds, at which CPU utilization.'),
      status: ref('autoscalingv1.HorizontalPodAutoscalerStatus', 'What the autoscaler last saw and decided. Read-only.'),
    }),
    HorizontalPodAutoscalerSpec: obj('The target, bounds and CPU target of an autoscaler.', {
      ...scaleBounds('autoscalingv1'),
      targetCPUUtilizationPercentage: int32('The target average CPU utilization in percent of the requests; unset means 80%.'),
    }, { required: ['scaleTargetRef', 'maxReplicas'] }),
    CrossVersionObjectReference: CROSS_VERSION_OBJECT_REFERENCE,
    HorizontalPodAutoscalerStatus: obj('What the autoscaler last saw and decided.', {
      ...REPLICAS_STATUS,
      currentCPUUtilizationPercentage: int32('The average CPU utilization last read, in percent of the requests.'),
    }, { required: ['currentReplicas', 'desiredReplicas'] }),
  }),
};
