/** Schemas of autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscaler. */
import { definitions, int32, int64, kind, listOf, obj, ref, str, time, type JsonSchema } from './dsl.js';

const quantity = (description: string): JsonSchema => ref('resource.Quantity', description);
const TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];

export const AUTOSCALING_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('autoscalingv2', {
    HorizontalPodAutoscaler: kind('autoscaling/v2:HorizontalPodAutoscaler', 'Scales a target through its scale subresource from the metrics of its pods.', {
      spec: ref('autoscalingv2.HorizontalPodAutoscalerSpec', 'What to scale, within which bounds, on which metrics.'),
      status: ref('autoscalingv2.HorizontalPodAutoscalerStatus', 'What the autoscaler last saw and decided. Read-only.'),
    }),
    HorizontalPodAutoscalerSpec: obj('The target, bounds, metrics and scaling behaviour of an autoscaler.', {
      scaleTargetRef: ref('autoscalingv2.CrossVersionObjectReference', 'The object scaled (its /scale subresource) and whose pods are measured.'),
      minReplicas: int32('The fewest replicas the autoscaler sets; defaults to 1.'),
      maxReplicas: int32('The most replicas the autoscaler sets; not below minReplicas.'),
      metrics: listOf('autoscalingv2.MetricSpec', 'The metrics; the largest replica count any of them asks for wins. Defaults to 80% average CPU utilization.', { type: 'atomic' }),
      behavior: ref('autoscalingv2.HorizontalPodAutoscalerBehavior', 'Rate limits and stabilization of scaling up and down.'),
    }, { required: ['scaleTargetRef', 'maxReplicas'] }),
    CrossVersionObjectReference: obj('The kind, name and apiVersion of an object in the same namespace.', {
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      apiVersion: str('API version of the referent.'),
    }, { required: ['kind', 'name'], mapType: 'atomic' }),
    MetricSpec: obj('One metric to scale on: type and the matching source field.', {
      type: str('Which source field is set.', { enum: TYPES }),
      resource: ref('autoscalingv2.ResourceMetricSource', 'A resource of the pods (cpu, memory), averaged over them.'),
      containerResource: ref('autoscalingv2.ContainerResourceMetricSource', 'A resource of one container of each pod.'),
      pods: ref('autoscalingv2.PodsMetricSource', 'A custom metric of each pod.'),
      object: ref('autoscalingv2.ObjectMetricSource', 'A custom metric of another object.'),
      external: ref('autoscalingv2.ExternalMetricSource', 'A metric from outside the cluster.'),
    }, { required: ['type'] }),
    ResourceMetricSource: obj('A resource metric of the pods.', {
      name: str('The resource (cpu, memory).'),
      target: ref('autoscalingv2.MetricTarget', 'The target value.'),
    }, { required: ['name', 'target'] }),
    ContainerResourceMetricSource: obj('A resource metric of one container in each pod.', {
      name: str('The resource (cpu, memory).'),
      target: ref('autoscalingv2.MetricTarget', 'The target value.'),
      container: str('The container’s name.'),
    }, { required: ['name', 'target', 'container'] }),
    PodsMetricSource: obj('A custom metric of each pod, averaged.', {
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
      target: ref('autoscalingv2.MetricTarget', 'The target value.'),
    }, { required: ['metric', 'target'] }),
    ObjectMetricSource: obj('A custom metric describing one object.', {
      describedObject: ref('autoscalingv2.CrossVersionObjectReference', 'The object.'),
      target: ref('autoscalingv2.MetricTarget', 'The target value.'),
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
    }, { required: ['describedObject', 'target', 'metric'] }),
    ExternalMetricSource: obj('A metric not tied to any object.', {
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
      target: ref('autoscalingv2.MetricTarget', 'The target value.'),
    }, { required: ['metric', 'target'] }),
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
    MetricStatus: obj('The last read value of one metric.', {
      type: str('Which source field is set.', { enum: TYPES }),
      resource: ref('autoscalingv2.ResourceMetricStatus', 'A resource metric of the pods.'),
      containerResource: ref('autoscalingv2.ContainerResourceMetricStatus', 'A resource metric of one container.'),
      pods: ref('autoscalingv2.PodsMetricStatus', 'A custom metric of each pod.'),
      object: ref('autoscalingv2.ObjectMetricStatus', 'A custom metric of another object.'),
      external: ref('autoscalingv2.ExternalMetricStatus', 'A metric from outside the cluster.'),
    }, { required: ['type'] }),
    ResourceMetricStatus: obj('The current value of a resource metric.', {
      name: str('The resource.'),
      current: ref('autoscalingv2.MetricValueStatus', 'The value.'),
    }, { required: ['name', 'current'] }),
    ContainerResourceMetricStatus: obj('The current value of a container resource metric.', {
      name: str('The resource.'),
      current: ref('autoscalingv2.MetricValueStatus', 'The value.'),
      container: str('The container’s name.'),
    }, { required: ['name', 'current', 'container'] }),
    PodsMetricStatus: obj('The current value of a pods metric.', {
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
      current: ref('autoscalingv2.MetricValueStatus', 'The value.'),
    }, { required: ['metric', 'current'] }),
    ObjectMetricStatus: obj('The current value of an object metric.', {
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
      current: ref('autoscalingv2.MetricValueStatus', 'The value.'),
      describedObject: ref('autoscalingv2.CrossVersionObjectReference', 'The object.'),
    }, { required: ['metric', 'current', 'describedObject'] }),
    ExternalMetricStatus: obj('The current value of an external metric.', {
      metric: ref('autoscalingv2.MetricIdentifier', 'The metric.'),
      current: ref('autoscalingv2.MetricValueStatus', 'The value.'),
    }, { required: ['metric', 'current'] }),
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
      observedGeneration: int64('The generation the autoscaler last acted on.'),
      lastScaleTime: time('When the autoscaler last changed the replica count.'),
      currentReplicas: int32('The replicas the target had when last read.'),
      desiredReplicas: int32('The replicas last asked for.'),
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
      scaleTargetRef: ref('autoscalingv1.CrossVersionObjectReference', 'The object scaled (its /scale subresource) and whose pods are measured.'),
      minReplicas: int32('The fewest replicas the autoscaler sets; defaults to 1.'),
      maxReplicas: int32('The most replicas the autoscaler sets; not below minReplicas.'),
      targetCPUUtilizationPercentage: int32('The target average CPU utilization in percent of the requests; unset means 80%.'),
    }, { required: ['scaleTargetRef', 'maxReplicas'] }),
    CrossVersionObjectReference: obj('The kind, name and apiVersion of an object in the same namespace.', {
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      apiVersion: str('API version of the referent.'),
    }, { required: ['kind', 'name'], mapType: 'atomic' }),
    HorizontalPodAutoscalerStatus: obj('What the autoscaler last saw and decided.', {
      observedGeneration: int64('The generation the autoscaler last acted on.'),
      lastScaleTime: time('When the autoscaler last changed the replica count.'),
      currentReplicas: int32('The replicas the target had when last read.'),
      desiredReplicas: int32('The replicas last asked for.'),
      currentCPUUtilizationPercentage: int32('The average CPU utilization last read, in percent of the requests.'),
    }, { required: ['currentReplicas', 'desiredReplicas'] }),
  }),
};
