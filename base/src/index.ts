// @nodelet/base: zero-dependency primitives shared by every package.
export * from './errors.js';
export * from './abort.js';
export * from './clock.js';
export * from './periodic.js';
export * from './backoff.js';
export * from './disposable.js';
export * from './serializer.js';
export * from './logger.js';
export * from './wakeup.js';
export * from './poll.js';
export * from './duration.js';
export * from './ipv4.js';
export * from './fs.js';
export * from './cgroup.js';
export * from './process.js';
