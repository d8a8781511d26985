// k8s.io/api autoscaling/v2 and v1 generated.proto: HorizontalPodAutoscaler (kubectl sends protobuf on
// create and apply). Names and field numbers are upstream's.
export const AUTOSCALING_V2_PROTO = `
syntax = "proto2";
package k8s.io.api.autoscaling.v2;

message CrossVersionObjectReference {
  optional string kind = 1;
  optional string name = 2;
  optional string apiVersion = 3;
}
message MetricTarget {
  optional string type = 1;
  optional k8s.io.apimachinery.pkg.api.resource.Quantity value = 2;
  optional k8s.io.apimachinery.pkg.api.resource.Quantity averageValue = 3;
  optional int32 averageUtilization = 4;
}
message MetricValueStatus {
  optional k8s.io.apimachinery.pkg.api.resource.Quantity value = 1;
  optional k8s.io.apimachinery.pkg.api.resource.Quantity averageValue = 2;
  optional int32 averageUtilization = 3;
}
message MetricIdentifier {
  optional string name = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2;
}
message ResourceMetricSource {
  optional string name = 1;
  optional MetricTarget target = 2;
}
message ContainerResourceMetricSource {
  optional string name = 1;
  optional MetricTarget target = 2;
  optional string container = 3;
}
message PodsMetricSource {
  optional MetricIdentifier metric = 1;
  optional MetricTarget target = 2;
}
message ObjectMetricSource {
  optional CrossVersionObjectReference describedObject = 1;
  optional MetricTarget target = 2;
  optional MetricIdentifier metric = 3;
}
message ExternalMetricSource {
  optional MetricIdentifier metric = 1;
  optional MetricTarget target = 2;
}
message MetricSpec {
  optional string type = 1;
  optional ObjectMetricSource object = 2;
  optional PodsMetricSource pods = 3;
  optional ResourceMetricSource resource = 4;
  optional ExternalMetricSource external = 5;
  optional ContainerResourceMetricSource containerResource = 7;
}
message ResourceMetricStatus {
  optional string name = 1;
  optional MetricValueStatus current = 2;
}
message ContainerResourceMetricStatus {
  optional string name = 1;
  optional MetricValueStatus current = 2;
  optional string container = 3;
}
message PodsMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
}
message ObjectMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
  optional CrossVersionObjectReference describedObject = 3;
}
message ExternalMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
}
message MetricStatus {
  optional string type = 1;
  optional ObjectMetricStatus object = 2;
  optional PodsMetricStatus pods = 3;
  optional ResourceMetricStatus resource = 4;
  optional ExternalMetricStatus external = 5;
  optional ContainerResourceMetricStatus containerResource = 7;
}
message HPAScalingPolicy {
  optional string type = 1;
  optional int32 value = 2;
  optional int32 periodSeconds = 3;
}
message HPAScalingRules {
  optional string selectPolicy = 1;
  repeated HPAScalingPolicy policies = 2;
  optional int32 stabilizationWindowSeconds = 3;
}
message HorizontalPodAutoscalerBehavior {
  optional HPAScalingRules scaleUp = 1;
  optional HPAScalingRules scaleDown = 2;
}
message HorizontalPodAutoscalerSpec {
  optional CrossVersionObjectReference scaleTargetRef = 1;
  optional int32 minReplicas = 2;
  optional int32 maxReplicas = 3;
  repeated MetricSpec metrics = 4;
  optional HorizontalPodAutoscalerBehavior behavior = 5;
}
message HorizontalPodAutoscalerCondition {
  optional string type = 1;
  optional string status = 2;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}
message HorizontalPodAutoscalerStatus {
  optional int64 observedGeneration = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time lastScaleTime = 2;
  optional int32 currentReplicas = 3;
  optional int32 desiredReplicas = 4;
  repeated MetricStatus currentMetrics = 5;
  repeated HorizontalPodAutoscalerCondition conditions = 6;
}
message HorizontalPodAutoscaler {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional HorizontalPodAutoscalerSpec spec = 2;
  optional HorizontalPodAutoscalerStatus status = 3;
}
`;

export const AUTOSCALING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.autoscaling.v1;

message CrossVersionObjectReference {
  optional string kind = 1;
  optional string name = 2;
  optional string apiVersion = 3;
}
message HorizontalPodAutoscalerSpec {
  optional CrossVersionObjectReference scaleTargetRef = 1;
  optional int32 minReplicas = 2;
  optional int32 maxReplicas = 3;
  optional int32 targetCPUUtilizationPercentage = 4;
}
message HorizontalPodAutoscalerStatus {
  optional int64 observedGeneration = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.Time lastScaleTime = 2;
  optional int32 currentReplicas = 3;
  optional int32 desiredReplicas = 4;
  optional int32 currentCPUUtilizationPercentage = 5;
}
message HorizontalPodAutoscaler {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional HorizontalPodAutoscalerSpec spec = 2;
  optional HorizontalPodAutoscalerStatus status = 3;
}
`;
