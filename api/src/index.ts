// @nodelet/api: Kubernetes object types, validation, defaulting, protobuf codec, REST client and informers.
export * from './types/index.js';
export * from './client/index.js';
export * from './validation/index.js';
export * from './defaults/index.js';
export * from './protobuf/index.js';
export * from './quantity.js';
export * from './selectors.js';
export * from './kubeconfig.js';
export * from './informer/index.js';
export * from './auth/bootstrap-token.js';
export * from './auth/node-credential.js';
export * from './auth/node-credential-file.js';
export * from './fs-atomic.js';
export * from './certificates/csr.js';
export * from './serving/index.js';
export * from './disruption.js';
export * from './schema/index.js';
