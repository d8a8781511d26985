// k8s.io/api policy/v1 generated.proto: PodDisruptionBudget (`kubectl create poddisruptionbudget`)
// and Eviction (the pods/eviction body). Names and field numbers are upstream's.
export const POLICY_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.policy.v1;

message PodDisruptionBudgetSpec {
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString minAvailable = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2;
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 3;
  optional string unhealthyPodEvictionPolicy = 4;
}
message PodDisruptionBudgetStatus {
  optional int64 observedGeneration = 1;
  map<string, k8s.io.apimachinery.pkg.apis.meta.v1.Time> disruptedPods = 2;
  optional int32 disruptionsAllowed = 3;
  optional int32 currentHealthy = 4;
  optional int32 desiredHealthy = 5;
  optional int32 expectedPods = 6;
  repeated k8s.io.apimachinery.pkg.apis.meta.v1.Condition conditions = 7;
}
message PodDisruptionBudget {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodDisruptionBudgetSpec spec = 2;
  optional PodDisruptionBudgetStatus status = 3;
}
message Eviction {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions deleteOptions = 2;
}
`;
