/** One snapshot of whichever store a server's datastore flags name: the CLI's save and the schedule's tick. */
import type { DatastoreEndpoint } from '../endpoint.js';
import { loadEtcdTls, type EtcdTlsFiles } from '../etcd/etcd-tls.js';
import { saveEtcdSnapshotTo } from './etcd-snapshot.js';
import { saveSqliteSnapshot } from './sqlite-snapshot.js';
import type { SnapshotInfo } from './snapshots.js';

export function saveStoreSnapshot(ds: DatastoreEndpoint, etcdTls: EtcdTlsFiles | undefined, dir: string, server: string): Promise<SnapshotInfo & { path: string }> {
  if (ds.kind === 'sqlite') return saveSqliteSnapshot({ dbPath: ds.path, dir, server });
  return saveEtcdSnapshotTo({ target: { endpoints: ds.endpoints, ...(ds.tls ? { tls: loadEtcdTls(etcdTls ?? {}) } : {}) }, dir, server });
}
