/**
 * autoscaling/v2 HorizontalPodAutoscaler: scales a target through its `/scale` subresource from
 * the pods' metrics. Names as in k8s.io/api/autoscaling/v2.
 */
import type { Condition, KubeObject, LabelSelector } from './meta.js';
import type { Quantity } from './pod.js';

export interface CrossVersionObjectReference {
  kind: string;
  name: string;
  apiVersion?: string;
}

export interface MetricTarget {
  type: 'Utilization' | 'Value' | 'AverageValue';
  value?: Quantity;
  averageValue?: Quantity;
  /** Percent of the pods' requests (Resource and ContainerResource only). */
  averageUtilization?: number;
}

export interface MetricIdentifier {
  name: string;
  selector?: LabelSelector;
}

export interface MetricSpec {
  type: 'ContainerResource' | 'External' | 'Object' | 'Pods' | 'Resource';
  resource?: { name: string; target: MetricTarget };
  containerResource?: { name: string; container: string; target: MetricTarget };
  pods?: { metric: MetricIdentifier; target: MetricTarget };
  object?: { describedObject: CrossVersionObjectReference; metric: MetricIdentifier; target: MetricTarget };
  external?: { metric: MetricIdentifier; target: MetricTarget };
}

export interface MetricValueStatus {
  value?: Quantity;
  averageValue?: Quantity;
  averageUtilization?: number;
}

export interface MetricStatus {
  type: MetricSpec['type'];
  resource?: { name: string; current: MetricValueStatus };
  containerResource?: { name: string; container: string; current: MetricValueStatus };
  pods?: { metric: MetricIdentifier; current: MetricValueStatus };
  object?: { describedObject: CrossVersionObjectReference; metric: MetricIdentifier; current: MetricValueStatus };
  external?: { metric: MetricIdentifier; current: MetricValueStatus };
}

export interface HPAScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface HPAScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: HPAScalingPolicy[];
}

export interface HorizontalPodAutoscalerSpec {
  scaleTargetRef: CrossVersionObjectReference;
  minReplicas?: number;
  maxReplicas: number;
  metrics?: MetricSpec[];
  behavior?: { scaleUp?: HPAScalingRules; scaleDown?: HPAScalingRules };
}

export interface HorizontalPodAutoscalerStatus {
  observedGeneration?: number;
  lastScaleTime?: string;
  currentReplicas?: number;
  desiredReplicas: number;
  currentMetrics?: MetricStatus[];
  conditions?: Condition[];
}

export interface HorizontalPodAutoscaler extends KubeObject {
  apiVersion?: 'autoscaling/v2';
  kind?: 'HorizontalPodAutoscaler';
  spec: HorizontalPodAutoscalerSpec;
  status?: HorizontalPodAutoscalerStatus;
}
