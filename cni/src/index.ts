// @nodelet/cni: CNI engine (conflists, plugin execution, version conversion, result cache),
// the agent-side CNI service and the nodelet-cni shim installer. No pod knowledge.
export * from './errors.js';
export * from './types.js';
export * from './version.js';
export * from './conflist.js';
export * from './exec.js';
export * from './cache.js';
export * from './engine.js';
export { buildEnv, buildRequest, parseCniArgs, validateRuntimeConf, validIfName, type Command, type PreparedPlugin } from './request.js';
export * from './service/chain.js';
export * from './service/runtime-files.js';
export * from './service/service.js';
export type { ShimRequest, ShimResponse } from './service/protocol.js';
