/**
 * `nodelet etcd …`: operations on the etcd a server uses (docs/ha.md "Backup and restore"). It
 * lives beside `nodelet server` because it needs the control plane's etcd code; bin/nodelet
 * routes `etcd` here. Flags follow etcdctl's names so runbooks carry over.
 *
 *   nodelet etcd status            each member: version, db size, leader, raft index; alarms
 *   nodelet etcd snapshot save F   Maintenance.Snapshot into F (0600, atomic), sha256 shown
 *   nodelet etcd snapshot restore F --data-dir D [--name … --initial-cluster …]
 *   nodelet etcd defrag            every member, one at a time
 */
import type { parseArgs } from 'node:util';
import { describeError } from '@nodelet/base';
import { subcommandMain, UsageError } from './subcommand-main.js';
import { parseDatastoreEndpoint } from './storage/endpoint.js';
import { defragmentEtcd, etcdAlarms, etcdMemberStatuses, saveEtcdSnapshot, type EtcdTarget } from './storage/etcd/etcd-maintenance.js';
import { restoreEtcdSnapshot } from './storage/etcd/etcd-restore.js';
import { loadEtcdTls } from './storage/etcd/etcd-tls.js';

const USAGE = `Usage: nodelet etcd <command> [flags]

Commands:
  status                         each member's version, db size, leader, raft index, and alarms
  snapshot save <file>           save a snapshot (mode 0600, written atomically) and print its sha256
  snapshot restore <file> --data-dir <dir>
                                 restore into a new data dir (runs etcdctl; etcd 3.4 has no restore API)
  defrag                         defragment every member, one at a time

Connection flags (status, save, defrag):
  --endpoints <list>             host:port or URLs, comma-separated (default 127.0.0.1:2379)
  --cacert <file>                CA of etcd's serving certificate (TLS)
  --cert <file>                  client certificate (etcd --client-cert-auth)
  --key <file>                   its key
Restore flags:
  --data-dir <dir>               where the member's data goes (must not exist or be empty)
  --name <name>                  the member's name (default "default")
  --initial-cluster <list>       name=peerURL,… of the restored cluster
  --initial-advertise-peer-urls <urls>
  --initial-cluster-token <token>
  -o, --output <format>          text (default) or json
`;

const OPTIONS = {
  endpoints: { type: 'string', default: '127.0.0.1:2379' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  'initial-cluster': { type: 'string' },
  'initial-advertise-peer-urls': { type: 'string' },
  'initial-cluster-token': { type: 'string' },
  output: { type: 'string', short: 'o', default: 'text' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export function main(argv: string[]): Promise<void> {
  return subcommandMain('etcd', USAGE, OPTIONS, argv, run);
}

async function run(pos: string[], v: Values): Promise<void> {
  const [cmd, sub, file] = pos;
  const json = v.output === 'json';
  if (cmd === 'status') return status(target(v), json);
  if (cmd === 'defrag') {
    const res = await defragmentEtcd(target(v));
    if (json) return print(res);
    for (const r of res) process.stdout.write(`Defragmented ${r.endpoint}: ${mib(r.beforeBytes)} → ${mib(r.afterBytes)}\n`);
    return;
  }
  if (cmd === 'snapshot' && sub === 'save' && file) {
    const s = await saveEtcdSnapshot(target(v), file);
    if (json) return print(s);
    process.stdout.write(`Snapshot saved to ${s.file} (${s.bytes} bytes, revision ${s.revision}, from ${s.endpoint})\nsha256:${s.sha256}\n`);
    return;
  }
  if (cmd === 'snapshot' && sub === 'restore' && file) {
    if (!v['data-dir']) throw new UsageError('snapshot restore needs --data-dir');
    await restoreEtcdSnapshot({
      snapshotFile: file,
      dataDir: v['data-dir'],
      name: v.name,
      initialCluster: v['initial-cluster'],
      initialAdvertisePeerUrls: v['initial-advertise-peer-urls'],
      initialClusterToken: v['initial-cluster-token'],
    });
    process.stdout.write(`Restored ${file} into ${v['data-dir']}; start etcd with --data-dir=${v['data-dir']}${v.name ? ` --name=${v.name}` : ''}\n`);
    return;
  }
  throw new UsageError(`unknown command "${pos.join(' ')}"; see nodelet etcd --help`);
}

/** The endpoints and TLS files, checked the way `nodelet server` checks --datastore-endpoint. */
function target(v: Values): EtcdTarget {
  const files = { caFile: v.cacert, certFile: v.cert, keyFile: v.key };
  const list = v.endpoints ?? '127.0.0.1:2379';
  // Bare host:port entries take their scheme from the TLS flags, as with `etcd://`.
  const spec = /:\/\//.test(list) ? list : `etcd://${list}`;
  let parsed;
  try {
    parsed = parseDatastoreEndpoint(spec, '/', files);
  } catch (err) {
    throw new UsageError((err as Error).message.replace('datastore endpoint', '--endpoints'));
  }
  if (parsed.kind !== 'etcd') throw new UsageError(`--endpoints "${list}" names no etcd`);
  return { endpoints: parsed.endpoints, ...(parsed.tls ? { tls: loadEtcdTls(files) } : {}) };
}

async function status(t: EtcdTarget, json: boolean): Promise<void> {
  const members = await etcdMemberStatuses(t);
  const alarms = await etcdAlarms(t).catch((err: unknown) => ({ error: describeError(err) }));
  if (json) return print({ members, alarms });
  for (const m of members) {
    if (!m.ok) {
      process.stdout.write(`${m.endpoint}  UNREACHABLE  ${m.error}\n`);
      continue;
    }
    const role = m.isLeader ? 'leader' : `follower (leader ${m.leader})`;
    process.stdout.write(`${m.endpoint}  id ${m.memberId}  v${m.version}  db ${mib(m.dbSizeBytes)} (in use ${mib(m.dbSizeInUseBytes)})  ${role}  term ${m.raftTerm}  index ${m.raftIndex}${m.errors.length ? `  errors: ${m.errors.join('; ')}` : ''}\n`);
  }
  if (Array.isArray(alarms)) process.stdout.write(alarms.length ? alarms.map((a) => `alarm ${a.alarm} on member ${a.memberId}\n`).join('') : 'no alarms\n');
  else process.stdout.write(`alarms unknown: ${alarms.error}\n`);
  if (members.some((m) => !m.ok) || (Array.isArray(alarms) && alarms.length > 0)) process.exitCode = 1;
}

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
const print = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
