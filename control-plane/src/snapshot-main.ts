/**
 * `nodelet snapshot …`: snapshots of a server's store, SQLite or etcd (docs/backup.md). It lives
 * beside `nodelet server` because it needs the store code; bin/nodelet routes `snapshot` here.
 * The flags that find the store are `nodelet server`'s, so the same values work for both.
 *
 *   nodelet snapshot save              take one now into the snapshot dir (0600, atomic, sidecar)
 *   nodelet snapshot ls                newest first, with revision, objects and size
 *   nodelet snapshot restore <file>    SQLite: into the stopped server's data dir; etcd: how to
 *   nodelet snapshot prune             keep the newest --retention good ones
 */
import { hostname } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { parseArgs } from 'node:util';
import { subcommandMain, UsageError } from './subcommand-main.js';
import { parseDatastoreEndpoint } from './storage/endpoint.js';
import { saveStoreSnapshot } from './storage/snapshot/save.js';
import { restoreSqliteSnapshot } from './storage/snapshot/sqlite-snapshot.js';
import { listSnapshots, pruneSnapshots, verifySnapshot } from './storage/snapshot/snapshots.js';

const USAGE = `Usage: nodelet snapshot <command> [flags]

Commands:
  save                           take a snapshot of the store now
  ls                             list the snapshots, newest first
  restore <file>                 SQLite: restore into the data dir of a STOPPED server (--force to
                                 replace its store); etcd: check the file and print the etcd restore
  prune                          keep the newest --retention good snapshots, remove older ones

Flags:
  --data-dir <dir>               the server's data dir (default /var/lib/nodelet/server)
  --datastore-endpoint <url>     as nodelet server (default sqlite://<data-dir>/state.db)
  --etcd-cafile, --etcd-certfile, --etcd-keyfile <file>   etcd TLS, as nodelet server
  --snapshot-dir <dir>           where snapshots go (default <data-dir>/snapshots)
  --name <name>                  the server name in file names (default: this host's name)
  --retention <n>                prune: how many good snapshots to keep (default 5)
  --force                        restore: replace an existing (stopped) store
  -o, --output <format>          text (default) or json
`;

const OPTIONS = {
  'data-dir': { type: 'string', default: '/var/lib/nodelet/server' },
  'datastore-endpoint': { type: 'string' },
  'etcd-cafile': { type: 'string' },
  'etcd-certfile': { type: 'string' },
  'etcd-keyfile': { type: 'string' },
  'snapshot-dir': { type: 'string' },
  name: { type: 'string' },
  retention: { type: 'string', default: '5' },
  force: { type: 'boolean' },
  output: { type: 'string', short: 'o', default: 'text' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export function main(argv: string[]): Promise<void> {
  return subcommandMain('snapshot', USAGE, OPTIONS, argv, run);
}

async function run(pos: string[], v: Values): Promise<void> {
  const [cmd, file, ...extra] = pos;
  if (extra.length || (cmd !== 'restore' && file !== undefined)) throw new UsageError(`unexpected argument "${[file, ...extra].filter(Boolean).join(' ')}"`);
  if (v.output !== 'text' && v.output !== 'json') throw new UsageError(`--output must be text or json, got "${v.output}"`);
  const json = v.output === 'json';
  const dataDir = v['data-dir']!;
  const dir = v['snapshot-dir'] ?? join(dataDir, 'snapshots');
  const server = v.name ?? hostname();
  switch (cmd) {
    case 'save': {
      const s = await saveNow(v, dataDir, dir, server, json ? undefined : (step) => void process.stderr.write(`${step}\n`));
      if (json) return print(s);
      process.stdout.write(`Snapshot saved to ${s.path} (${s.kind}, revision ${s.revision}, ${s.objects} objects, ${s.bytes} bytes)\nsha256:${s.sha256}\n`);
      return;
    }
    case 'ls': {
      const list = await listSnapshots(dir);
      if (json) return print(list.map((s) => ({ path: s.path, ...(s.info ?? {}), ...(s.problem ? { problem: s.problem } : {}) })));
      if (list.length === 0) return void process.stdout.write(`no snapshots in ${dir}\n`);
      process.stdout.write(`${'NAME'.padEnd(48)} ${'KIND'.padEnd(6)} ${'CREATED'.padEnd(24)} ${'REVISION'.padStart(9)} ${'OBJECTS'.padStart(8)} ${'SIZE'.padStart(10)}\n`);
      for (const s of list) {
        if (!s.info) process.stdout.write(`${s.file.padEnd(48)} ${s.problem}\n`);
        else process.stdout.write(`${s.file.padEnd(48)} ${s.info.kind.padEnd(6)} ${s.info.createdAt.padEnd(24)} ${String(s.info.revision).padStart(9)} ${String(s.info.objects).padStart(8)} ${String(s.info.bytes).padStart(10)}\n`);
      }
      return;
    }
    case 'restore': {
      if (!file) throw new UsageError('restore needs the snapshot file');
      const path = isAbsolute(file) || file.includes('/') ? file : join(dir, file);
      const info = await verifySnapshot(path);
      if (info.kind === 'etcd') {
        process.stdout.write(`${path}: etcd snapshot at revision ${info.revision}, sha256 verified. Restore it into a fresh etcd data dir with:\n  nodelet etcd snapshot restore ${path} --data-dir <dir> [--name … --initial-cluster …]\n`);
        return;
      }
      const ds = parseDatastoreEndpoint(v['datastore-endpoint'], dataDir);
      if (ds.kind !== 'sqlite') throw new UsageError(`${path} is a SQLite snapshot but --datastore-endpoint names etcd`);
      await restoreSqliteSnapshot({ snapshot: path, dbPath: ds.path, force: v.force });
      if (json) return print({ restored: path, into: ds.path, revision: info.revision, objects: info.objects });
      process.stdout.write(`Restored ${path} (revision ${info.revision}, ${info.objects} objects) into ${ds.path}; start the server with --data-dir ${dataDir}\n`);
      return;
    }
    case 'prune': {
      const retention = Number(v.retention);
      const removed = await pruneSnapshots(dir, { retention });
      if (json) return print({ removed });
      for (const f of removed) process.stdout.write(`removed   ${join(dir, f)}\n`);
      process.stdout.write(`${removed.length} snapshot${removed.length === 1 ? '' : 's'} removed; the newest ${retention} good ones are kept in ${dir}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${pos.join(' ')}"; see nodelet snapshot --help`);
  }
}

/** Takes a snapshot of the store the flags name. */
function saveNow(v: Values, dataDir: string, dir: string, server: string, say?: (step: string) => void): ReturnType<typeof saveStoreSnapshot> {
  const files = {
    ...(v['etcd-cafile'] ? { caFile: v['etcd-cafile'] } : {}),
    ...(v['etcd-certfile'] ? { certFile: v['etcd-certfile'] } : {}),
    ...(v['etcd-keyfile'] ? { keyFile: v['etcd-keyfile'] } : {}),
  };
  let ds;
  try {
    ds = parseDatastoreEndpoint(v['datastore-endpoint'], dataDir, files);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  say?.(`taking a snapshot of the ${ds.kind === 'sqlite' ? `SQLite store ${ds.path}` : `etcd store at ${ds.endpoints.join(',')}`} into ${dir} (one consistent copy, then its checksum)…`);
  return saveStoreSnapshot(ds, files, dir, server);
}

function print(v: unknown): void {
  process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
}
