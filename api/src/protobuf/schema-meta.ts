// The subset of k8s.io/apimachinery generated.proto that request bodies use. Message and field
// names and numbers are upstream's (apimachinery pkg/apis/meta/v1, pkg/runtime, pkg/api/resource,
// pkg/util/intstr); only the messages nodelet decodes are listed.
export const META_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;

message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message MicroTime { optional int64 seconds = 1; optional int32 nanos = 2; }
message Duration { optional int64 duration = 1; }

message OwnerReference {
  optional string kind = 1;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional bool controller = 6;
  optional bool blockOwnerDeletion = 7;
}

message FieldsV1 { optional bytes Raw = 1; }

message ManagedFieldsEntry {
  optional string manager = 1;
  optional string operation = 2;
  optional string apiVersion = 3;
  optional Time time = 4;
  optional string fieldsType = 6;
  optional FieldsV1 fieldsV1 = 7;
  optional string subresource = 8;
}

message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}

message ListMeta {
  optional string selfLink = 1;
  optional string resourceVersion = 2;
  optional string continue = 3;
  optional int64 remainingItemCount = 4;
}

message Condition {
  optional string type = 1;
  optional string status = 2;
  optional int64 observedGeneration = 3;
  optional Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}

message Preconditions { optional string uid = 1; optional string resourceVersion = 2; }

message DeleteOptions {
  optional int64 gracePeriodSeconds = 1;
  optional Preconditions preconditions = 2;
  optional bool orphanDependents = 3;
  optional string propagationPolicy = 4;
  repeated string dryRun = 5;
  optional bool ignoreStoreReadErrorWithClusterBreakingPotential = 6;
}

// Replies only (the ERROR event of a watch).
message StatusCause { optional string reason = 1; optional string message = 2; optional string field = 3; }
message StatusDetails {
  optional string name = 1;
  optional string group = 2;
  optional string kind = 3;
  repeated StatusCause causes = 4;
  optional int32 retryAfterSeconds = 5;
  optional string uid = 6;
}
message Status {
  optional ListMeta metadata = 1;
  optional string status = 2;
  optional string message = 3;
  optional string reason = 4;
  optional StatusDetails details = 5;
  optional int32 code = 6;
}

message LabelSelectorRequirement {
  optional string key = 1;
  optional string operator = 2;
  repeated string values = 3;
}

message LabelSelector {
  map<string, string> matchLabels = 1;
  repeated LabelSelectorRequirement matchExpressions = 2;
}
`;

export const RUNTIME_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.runtime;

message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }

// The envelope after the 4-byte magic "k8s\\0".
message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}

message RawExtension { optional bytes raw = 1; }
`;

export const RESOURCE_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.api.resource;
message Quantity { optional string string = 1; }
`;

export const INTSTR_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.util.intstr;
message IntOrString { optional int64 type = 1; optional int32 intVal = 2; optional string strVal = 3; }
`;
