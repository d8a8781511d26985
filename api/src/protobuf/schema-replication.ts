// k8s.io/api core/v1 generated.proto: ReplicationController and PodTemplate. Names and field numbers
// are upstream's; the status is empty (kubectl never sends one).
import { specAndStatus } from './schema-shapes.js';

export const CORE_V1_REPLICATION_PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;

message ReplicationControllerSpec {
  optional int32 replicas = 1;
  map<string, string> selector = 2;
  optional PodTemplateSpec template = 3;
  optional int32 minReadySeconds = 4;
}
${specAndStatus('ReplicationController')}
message PodTemplate {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodTemplateSpec template = 2;
}
`;
