// k8s.io/api core/v1 ResourceQuota and LimitRange and scheduling/v1 PriorityClass generated.proto
// (`kubectl create quota`, `kubectl create priorityclass` send protobuf). Names and field numbers are upstream's.
export const CORE_V1_QUOTA_PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;

message ScopedResourceSelectorRequirement {
  optional string scopeName = 1;
  optional string operator = 2;
  repeated string values = 3;
}
message ScopeSelector {
  repeated ScopedResourceSelectorRequirement matchExpressions = 1;
}
message ResourceQuotaSpec {
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> hard = 1;
  repeated string scopes = 2;
  optional ScopeSelector scopeSelector = 3;
}
message ResourceQuotaStatus {
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> hard = 1;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> used = 2;
}
message ResourceQuota {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ResourceQuotaSpec spec = 2;
  optional ResourceQuotaStatus status = 3;
}
message LimitRangeItem {
  optional string type = 1;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> max = 2;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> min = 3;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> default = 4;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> defaultRequest = 5;
  map<string, k8s.io.apimachinery.pkg.api.resource.Quantity> maxLimitRequestRatio = 6;
}
message LimitRangeSpec {
  repeated LimitRangeItem limits = 1;
}
message LimitRange {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional LimitRangeSpec spec = 2;
}
`;

export const SCHEDULING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.scheduling.v1;

message PriorityClass {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional int32 value = 2;
  optional bool globalDefault = 3;
  optional string description = 4;
  optional string preemptionPolicy = 5;
}
`;
