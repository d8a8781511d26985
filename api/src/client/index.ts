export * from './api-client.js';
export * from './resource-client.js';
export * from './options.js';
export { ApiStatusError, statusOf } from './errors.js';
export * from './retry.js';
export { requestChannel, type RequestDiagnostic, type TransportOptions } from './transport.js';
export { DEFAULT_PROBE_INTERVAL_MS } from './failover-transport.js';
