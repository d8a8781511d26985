// k8s.io/api networking/v1 generated.proto: Ingress, IngressClass, NetworkPolicy (`kubectl create ingress`
// sends protobuf). Names and field numbers are upstream's; IngressRule's `ingressRuleValue` is inlined in
// JSON (INLINE_FIELDS), and IngressClassParametersReference's `aPIGroup` is named by its JSON name here.
export const NETWORKING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.networking.v1;

message TypedLocalObjectReference {
  optional string apiGroup = 1;
  optional string kind = 2;
  optional string name = 3;
}
message ServiceBackendPort {
  optional string name = 1;
  optional int32 number = 2;
}
message IngressServiceBackend {
  optional string name = 1;
  optional ServiceBackendPort port = 2;
}
message IngressBackend {
  optional TypedLocalObjectReference resource = 3;
  optional IngressServiceBackend service = 4;
}
message HTTPIngressPath {
  optional string path = 1;
  optional IngressBackend backend = 2;
  optional string pathType = 3;
}
message HTTPIngressRuleValue {
  repeated HTTPIngressPath paths = 1;
}
message IngressRuleValue {
  optional HTTPIngressRuleValue http = 1;
}
message IngressRule {
  optional string host = 1;
  optional IngressRuleValue ingressRuleValue = 2;
}
message IngressTLS {
  repeated string hosts = 1;
  optional string secretName = 2;
}
message IngressSpec {
  optional IngressBackend defaultBackend = 1;
  repeated IngressTLS tls = 2;
  repeated IngressRule rules = 3;
  optional string ingressClassName = 4;
}
message IngressPortStatus {
  optional int32 port = 1;
  optional string protocol = 2;
  optional string error = 3;
}
message IngressLoadBalancerIngress {
  optional string ip = 1;
  optional string hostname = 2;
  repeated IngressPortStatus ports = 4;
}
message IngressLoadBalancerStatus {
  repeated IngressLoadBalancerIngress ingress = 1;
}
message IngressStatus {
  optional IngressLoadBalancerStatus loadBalancer = 1;
}
message Ingress {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional IngressSpec spec = 2;
  optional IngressStatus status = 3;
}
message IngressClassParametersReference {
  optional string apiGroup = 1;
  optional string kind = 2;
  optional string name = 3;
  optional string scope = 4;
  optional string namespace = 5;
}
message IngressClassSpec {
  optional string controller = 1;
  optional IngressClassParametersReference parameters = 2;
}
message IngressClass {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional IngressClassSpec spec = 2;
}
message IPBlock {
  optional string cidr = 1;
  repeated string except = 2;
}
message NetworkPolicyPeer {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector podSelector = 1;
  optional k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector namespaceSelector = 2;
  optional IPBlock ipBlock = 3;
}
message NetworkPolicyPort {
  optional string protocol = 1;
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 2;
  optional int32 endPort = 3;
}
message NetworkPolicyIngressRule {
  repeated NetworkPolicyPort ports = 1;
  repeated NetworkPolicyPeer from = 2;
}
message NetworkPolicyEgressRule {
  repeated NetworkPolicyPort ports = 1;
  repeated NetworkPolicyPeer to = 2;
}
message NetworkPolicySpec {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector podSelector = 1;
  repeated NetworkPolicyIngressRule ingress = 2;
  repeated NetworkPolicyEgressRule egress = 3;
  repeated string policyTypes = 4;
}
message NetworkPolicy {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional NetworkPolicySpec spec = 2;
}
`;
