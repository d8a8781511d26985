export * from './fake-clock.js';
