// rbac.authorization.k8s.io/v1 and the review kinds of authorization.k8s.io/v1 and
// authentication.k8s.io/v1, as kubectl sends them (`kubectl create role|rolebinding|…`,
// `kubectl auth can-i [--list]`, `kubectl auth reconcile`, `kubectl auth whoami`,
// `kubectl create token`). Message and
// field names and numbers are upstream's (k8s.io/api rbac/v1, authorization/v1, authentication/v1
// generated.proto); fields nodelet does not use (selector attributes) are left out and skipped.
import { META, kindMessage } from './schema-shapes.js';

export const RBAC_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.rbac.v1;

message AggregationRule { repeated ${META}.LabelSelector clusterRoleSelectors = 1; }
message PolicyRule {
  repeated string verbs = 1;
  repeated string apiGroups = 2;
  repeated string resources = 3;
  repeated string resourceNames = 4;
  repeated string nonResourceURLs = 5;
}
message Subject { optional string kind = 1; optional string apiGroup = 2; optional string name = 3; optional string namespace = 4; }
message RoleRef { optional string apiGroup = 1; optional string kind = 2; optional string name = 3; }
message Role { optional ${META}.ObjectMeta metadata = 1; repeated PolicyRule rules = 2; }
message ClusterRole {
  optional ${META}.ObjectMeta metadata = 1;
  repeated PolicyRule rules = 2;
  optional AggregationRule aggregationRule = 3;
}
message RoleBinding { optional ${META}.ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }
message ClusterRoleBinding { optional ${META}.ObjectMeta metadata = 1; repeated Subject subjects = 2; optional RoleRef roleRef = 3; }
`;

export const AUTHORIZATION_V1_REVIEWS_PROTO = `
syntax = "proto2";
package k8s.io.api.authorization.v1;

message ExtraValue { repeated string items = 1; }
message SubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1;
  optional NonResourceAttributes nonResourceAttributes = 2;
  optional string user = 3;
  repeated string groups = 4;
  map<string, ExtraValue> extra = 5;
  optional string uid = 6;
}
${kindMessage('SubjectAccessReview', { spec: 'SubjectAccessReviewSpec', status: 'SubjectAccessReviewStatus' })}
${kindMessage('LocalSubjectAccessReview', { spec: 'SubjectAccessReviewSpec', status: 'SubjectAccessReviewStatus' })}
message SelfSubjectRulesReviewSpec { optional string namespace = 1; }
${kindMessage('SelfSubjectRulesReview', { spec: 'SelfSubjectRulesReviewSpec' })}
`;

export const AUTHENTICATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.authentication.v1;

message SelfSubjectReview { optional ${META}.ObjectMeta metadata = 1; }
message BoundObjectReference { optional string kind = 1; optional string apiVersion = 2; optional string name = 3; optional string uid = 4; }
message TokenRequestSpec {
  repeated string audiences = 1;
  optional BoundObjectReference boundObjectRef = 3;
  optional int64 expirationSeconds = 4;
}
${kindMessage('TokenRequest', { spec: 'TokenRequestSpec' })}
`;
