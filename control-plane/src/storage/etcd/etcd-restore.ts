/**
 * Restoring an etcd snapshot into a fresh data dir. etcd 3.4 has no restore API: a restore
 * rewrites the snapshot's database with a new cluster membership and writes a new WAL and raft
 * snapshot around it, and the only implementation is `etcdctl snapshot restore` (`etcdutl` from
 * 3.5 on). So this runs the installed etcdctl (Debian package `etcd-client`) with the flags the
 * user gave, after checking what etcdctl would only half-explain. docs/ha.md "Backup and restore".
 */
import { execFile } from 'node:child_process';
import { access, constants, readdir, stat } from 'node:fs/promises';
import { AgentError } from '@nodelet/base';

export interface RestoreOptions {
  snapshotFile: string;
  /** Must not exist or be empty: a restore never writes over a member's data. */
  dataDir: string;
  /** Member name (etcd's default `default`). */
  name?: string;
  /** `name=peerURL,…` of the cluster being restored (default: this member alone on http://localhost:2380). */
  initialCluster?: string;
  /** This member's peer URL (default the one `initialCluster` gives for `name`). */
  initialAdvertisePeerUrls?: string;
  initialClusterToken?: string;
  /** etcdctl to run (default `$NODELET_ETCDCTL` or `etcdctl` on PATH). */
  etcdctl?: string;
  signal?: AbortSignal;
}

/**
 * Restores `snapshotFile` into `dataDir`. Throws ERR_INVALID_ARGUMENT for a missing snapshot or
 * a data dir in use, ERR_FAILED_PRECONDITION when etcdctl is not installed, ERR_INTERNAL with
 * etcdctl's message when it fails (a corrupt snapshot fails its sha256 check there).
 */
export async function restoreEtcdSnapshot(o: RestoreOptions): Promise<void> {
  try {
    if (!(await stat(o.snapshotFile)).isFile()) throw new Error('not a file');
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read snapshot "${o.snapshotFile}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const entries = await readdir(o.dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot use --data-dir "${o.dataDir}": ${err.code ?? err.message}`, { cause: err });
  });
  if (entries.length > 0) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `--data-dir "${o.dataDir}" is not empty; restore into a new directory and point etcd at it (an existing member's data is never overwritten)`);
  }
  const etcdctl = o.etcdctl ?? process.env.NODELET_ETCDCTL ?? 'etcdctl';
  if (etcdctl.includes('/')) {
    await access(etcdctl, constants.X_OK).catch((err: unknown) => {
      throw notInstalled(etcdctl, err);
    });
  }
  const args = ['snapshot', 'restore', o.snapshotFile, `--data-dir=${o.dataDir}`];
  if (o.name) args.push(`--name=${o.name}`);
  if (o.initialCluster) args.push(`--initial-cluster=${o.initialCluster}`);
  if (o.initialAdvertisePeerUrls) args.push(`--initial-advertise-peer-urls=${o.initialAdvertisePeerUrls}`);
  if (o.initialClusterToken) args.push(`--initial-cluster-token=${o.initialClusterToken}`);
  await new Promise<void>((resolve, reject) => {
    execFile(etcdctl, args, { env: { ...process.env, ETCDCTL_API: '3' }, signal: o.signal, timeout: 10 * 60_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(notInstalled(etcdctl, err));
      if (err.name === 'AbortError') return reject(err);
      reject(new AgentError('ERR_INTERNAL', `etcdctl snapshot restore failed: ${String(stderr).trim().split('\n').slice(-3).join(' ') || err.message}`, { cause: err }));
    });
  });
}

function notInstalled(etcdctl: string, cause: unknown): AgentError {
  return new AgentError(
    'ERR_FAILED_PRECONDITION',
    `restoring needs etcdctl ("${etcdctl}" not found): etcd 3.4 restores only through \`etcdctl snapshot restore\`; install it (apt-get install etcd-client) or set NODELET_ETCDCTL`,
    { cause },
  );
}
