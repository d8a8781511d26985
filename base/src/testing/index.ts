export * from './fake-clock.js';
export * from './child.js';
export * from './recording-logger.js';
export * from './free-port.js';
export * from './python-client.js';
export * from './cleanups.js';
