export * from './failpoint.js';
export * from './fake-executor.js';
