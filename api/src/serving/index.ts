// Helpers for the servers that face untrusted HTTP clients (the API server, the agent's node API).
export * from './request-target.js';
export * from './raw-reply.js';
export * from './harden.js';
export * from './query-params.js';
export * from './heap.js';
