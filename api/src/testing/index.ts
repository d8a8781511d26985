// @nodelet/api/testing: fakes at the process boundary (an in-process HTTP API server).
export * from './in-memory-api-server.js';
export { apiServerContract, type ContractTarget } from './contract.js';
export { MemoryStore, StatusFailure, type StoreEvent } from './memory-store.js';
export * from './raw-http.js';
