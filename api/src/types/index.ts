export * from './meta.js';
export * from './pod.js';
export * from './node.js';
export * from './core.js';
export * from './apps.js';
export * from './misc.js';
export * from './rbac.js';
export * from './resources.js';
