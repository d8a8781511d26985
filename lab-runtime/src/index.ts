// @nodelet/lab-runtime: containerd configuration and lifecycle for lab machines and tests.
export * from './containerd-config.js';
export * from './cri-probe.js';
export * from './containerd.js';
export * from './sweep.js';
export { findProcesses, run, terminate, isAlive, waitGone } from './procs.js';
export * from './lab-node.js';
export * from './lab-layout.js';
export * from './dropin.js';
export { crunForLab, hybridCgroupsWithV2Controllers, renderCrunWrapper } from './crun.js';
export * from './managed-process.js';
