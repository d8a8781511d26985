/**
 * `@nodelet/api/agent`: what the node agent (and the service proxy) use of this package, without
 * the API server's parts. The package root also loads the OpenAPI schema tables, the defaulting
 * and whole-object validation of every kind, the quota evaluator and the HPA conversions: about a
 * hundred modules an agent never runs, each costing heap for its source and bytecode on every
 * node. A test (`agent/test/light-imports.test.ts`) starts the agent's entry and fails when any
 * of those is loaded; an eslint rule keeps the agent's static imports on this subpath.
 *
 * Kept here: the object types, the REST client with its protobuf wire codec (the agent lists and
 * watches in protobuf, as kubelet does), informers, the event recorder, kubeconfig and node
 * credentials, the serving hardening of the node API, and the few leaf validators the runtime
 * applies to names that become host paths. Static pod manifests need the full pod defaulting and
 * validation; the agent loads those from the package root only when a manifest is read.
 */
export * from './types/index.js';
export * from './client/index.js';
export * from './quantity.js';
export * from './selectors.js';
export * from './merge-patch.js';
export * from './taints.js';
export * from './qos.js';
export * from './pod-config-sources.js';
export * from './time.js';
export * from './kubeconfig.js';
export * from './informer/index.js';
export * from './events/index.js';
export * from './auth/node-credential.js';
export * from './auth/node-credential-file.js';
export * from './fs-atomic.js';
export * from './certificates/csr.js';
export * from './certificates/x509-lazy.js';
export * from './serving/index.js';
export { invalidValue, type FieldError } from './validation/field-error.js';
export { dns1123LabelProblem, isDns1123Label } from './validation/names.js';
export { localDescendingPathProblems, localNonReservedPathProblems } from './validation/paths.js';
export { validatePodVolumes } from './validation/volumes.js';
