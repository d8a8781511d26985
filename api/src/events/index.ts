export * from './recorder.js';
