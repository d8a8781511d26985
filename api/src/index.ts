// @nodelet/api: Kubernetes object types, validation, defaulting, protobuf codec, REST client and informers.
export * from './types/index.js';
export * from './client/index.js';
