// The subset of k8s.io/api core/v1, apps/v1 and authorization/v1 generated.proto that `kubectl create <generator>`
// sends (kubectl >= 1.32 posts protobuf bodies). Names and field numbers are upstream's; messages
// or fields not listed here are skipped by the decoder, so only add fields with their real number.
import { META, kindMessage, specAndStatus } from './schema-shapes.js';

export const CORE_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;

message LocalObjectReference { optional string name = 1; }

message ObjectReference {
  optional string kind = 1;
  optional string namespace = 2;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional string resourceVersion = 6;
  optional string fieldPath = 7;
}

${kindMessage('Namespace', { spec: 'NamespaceSpec', status: 'NamespaceStatus' })}
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; }

message ConfigMap {
  optional ${META}.ObjectMeta metadata = 1;
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
  optional bool immutable = 4;
}

message Secret {
  optional ${META}.ObjectMeta metadata = 1;
  map<string, bytes> data = 2;
  optional string type = 3;
  map<string, string> stringData = 4;
  optional bool immutable = 5;
}

message ServiceAccount {
  optional ${META}.ObjectMeta metadata = 1;
  repeated ObjectReference secrets = 2;
  repeated LocalObjectReference imagePullSecrets = 3;
  optional bool automountServiceAccountToken = 4;
}

${kindMessage('Service', { spec: 'ServiceSpec', status: 'ServiceStatus' })}
message PortStatus { optional int32 port = 1; optional string protocol = 2; optional string error = 3; }
message LoadBalancerIngress { optional string ip = 1; optional string hostname = 2; repeated PortStatus ports = 4; optional string ipMode = 5; }
message LoadBalancerStatus { repeated LoadBalancerIngress ingress = 1; }
message ServiceStatus { optional LoadBalancerStatus loadBalancer = 1; repeated ${META}.Condition conditions = 2; }
message ServicePort {
  optional string name = 1;
  optional string protocol = 2;
  optional int32 port = 3;
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString targetPort = 4;
  optional int32 nodePort = 5;
  optional string appProtocol = 6;
}
message ClientIPConfig { optional int32 timeoutSeconds = 1; }
message SessionAffinityConfig { optional ClientIPConfig clientIP = 1; }
message ServiceSpec {
  repeated ServicePort ports = 1;
  map<string, string> selector = 2;
  optional string clusterIP = 3;
  optional string type = 4;
  repeated string externalIPs = 5;
  optional string sessionAffinity = 7;
  optional string loadBalancerIP = 8;
  repeated string loadBalancerSourceRanges = 9;
  optional string externalName = 10;
  optional string externalTrafficPolicy = 11;
  optional int32 healthCheckNodePort = 12;
  optional bool publishNotReadyAddresses = 13;
  optional SessionAffinityConfig sessionAffinityConfig = 14;
  optional string ipFamilyPolicy = 17;
  repeated string clusterIPs = 18;
  repeated string ipFamilies = 19;
  optional bool allocateLoadBalancerNodePorts = 20;
  optional string loadBalancerClass = 21;
  optional string internalTrafficPolicy = 22;
}

// Pod, PodSpec, PodStatus and the messages under them: ./schema-pod.ts.
`;

export const APPS_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.apps.v1;

message RollingUpdateDeployment {
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 1;
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString maxSurge = 2;
}
message DeploymentStrategy {
  optional string type = 1;
  optional RollingUpdateDeployment rollingUpdate = 2;
}
message DeploymentSpec {
  optional int32 replicas = 1;
  optional ${META}.LabelSelector selector = 2;
  optional k8s.io.api.core.v1.PodTemplateSpec template = 3;
  optional DeploymentStrategy strategy = 4;
  optional int32 minReadySeconds = 5;
  optional int32 revisionHistoryLimit = 6;
  optional bool paused = 7;
  optional int32 progressDeadlineSeconds = 9;
}
${specAndStatus('Deployment')}
message ReplicaSetSpec {
  optional int32 replicas = 1;
  optional ${META}.LabelSelector selector = 2;
  optional k8s.io.api.core.v1.PodTemplateSpec template = 3;
  optional int32 minReadySeconds = 4;
}
${specAndStatus('ReplicaSet')}
`;

export const AUTHORIZATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.authorization.v1;

message ResourceAttributes {
  optional string namespace = 1;
  optional string verb = 2;
  optional string group = 3;
  optional string version = 4;
  optional string resource = 5;
  optional string subresource = 6;
  optional string name = 7;
}
message NonResourceAttributes { optional string path = 1; optional string verb = 2; }
message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1;
  optional NonResourceAttributes nonResourceAttributes = 2;
}
message SubjectAccessReviewStatus {
  optional bool allowed = 1;
  optional string reason = 2;
  optional string evaluationError = 3;
  optional bool denied = 4;
}
${kindMessage('SelfSubjectAccessReview', { spec: 'SelfSubjectAccessReviewSpec', status: 'SubjectAccessReviewStatus' })}
`;
