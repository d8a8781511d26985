export * from './resource-list.js';
export * from './evaluator.js';
