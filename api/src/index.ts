// @nodelet/api: Kubernetes object types, validation, defaulting, protobuf codec, REST client and informers.
// What the agent uses is `./agent.js` (the `@nodelet/api/agent` subpath); the rest is the API
// server's and the tools' (schema tables, defaulting, whole-object validation, quota, HPA conversion).
export * from './agent.js';
export * from './validation/index.js';
export * from './defaults/index.js';
export * from './protobuf/index.js';
export * from './quota/index.js';
export { HPA_V1_ANNOTATIONS, hpaFromV1, hpaToV1 } from './autoscaling/conversion.js';
export * from './auth/bootstrap-token.js';
export * from './auth/server-join.js';
export * from './certificates/approve-serving.js';
export * from './disruption.js';
export * from './schema/index.js';
