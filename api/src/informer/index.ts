export * from './informer.js';
export * from './work-queue.js';
export * from './factory.js';
