/**
 * Snapshots of an etcd store in the snapshot directory: etcd's own Maintenance snapshot (what
 * `etcdctl snapshot save` takes, restorable with `nodelet etcd snapshot restore`), with the sidecar
 * snapshots.ts describes. The object count is the keys under the server's prefix at the
 * recorded revision.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { countEtcdKeys, etcdRevision, saveEtcdSnapshot, type EtcdTarget } from '../etcd/etcd-maintenance.js';
import { snapshotFileName, writeSidecar, type SnapshotInfo } from './snapshots.js';

/** Takes an etcd snapshot into `dir` and records its sidecar. `prefix`: the server's keys (default /registry/). */
export async function saveEtcdSnapshotTo(o: { target: EtcdTarget; dir: string; server: string; prefix?: string; now?: Date; signal?: AbortSignal }): Promise<SnapshotInfo & { path: string }> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const at = o.now ?? new Date();
  const file = snapshotFileName(o.server, 'etcd', at);
  const path = join(o.dir, file);
  // etcd 3.4 sends no revision in the snapshot stream's header: the revision read just before the
  // snapshot starts is one it holds (every write acknowledged at or below it is in the file).
  const before = await etcdRevision(o.target);
  const s = await saveEtcdSnapshot(o.target, path, { signal: o.signal });
  const revision = s.revision || before;
  const objects = await countEtcdKeys(o.target, o.prefix ?? '/registry/', revision);
  const info: SnapshotInfo = { file, kind: 'etcd', server: o.server, createdAt: at.toISOString(), sha256: s.sha256, revision, objects, bytes: (await stat(path)).size };
  await writeSidecar(o.dir, info);
  return { ...info, path };
}
