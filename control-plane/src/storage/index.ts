// Storage of the API server: one interface (types.ts), a kine-style SQLite backend (the default)
// and an etcd v3 backend. See docs/storage.md.
export type * from './types.js';
export { createSqliteStore, type SqliteStoreOptions } from './sqlite/sqlite-store.js';
export { createEtcdStore, type EtcdStoreOptions } from './etcd/etcd-store.js';
export { openStore, parseDatastoreEndpoint, type DatastoreEndpoint, type OpenStoreOptions } from './endpoint.js';
export type { EtcdTlsFiles } from './etcd/etcd-tls.js';
export { startCompactor, compactKeeping, type CompactorOptions } from './compactor.js';
export { prefixRangeEnd } from './keys.js';
export { loadEtcdTls, type EtcdTls } from './etcd/etcd-tls.js';
export * from './etcd/etcd-maintenance.js';
