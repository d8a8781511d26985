export * from './fake-clock.js';
export * from './child.js';
