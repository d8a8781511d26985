/**
 * `nodelet doctor` on a server host: the health of each etcd member, as the server sees it
 * (`GET /debug/nodelet/etcd`, served only to admins and only when the server runs on etcd).
 * One line per member (version, db size, leader, raft index) and one for the alarms.
 */
import { ApiClient, loadKubeconfig } from '@nodelet/api';
import { describeError, errCode } from '@nodelet/base';
import type { Check, CheckResult } from './check.js';

/** The path the server serves the member status on (control-plane apiserver/server.ts). */
export const ETCD_STATUS_PATH = '/debug/nodelet/etcd';

/** One member as the server reports it (control-plane storage/etcd/etcd-maintenance.ts). */
type Member =
  | { endpoint: string; ok: true; memberId: string; version: string; dbSizeBytes: number; leader: string; isLeader: boolean; raftIndex: number; errors: string[] }
  | { endpoint: string; ok: false; error: string };

export interface EtcdStatusReply {
  members: Member[];
  alarms: Array<{ memberId: string; alarm: string }> | { error: string };
}

const mib = (b: number): string => `${(b / (1024 * 1024)).toFixed(1)} MiB`;

/** The check lines for a status reply: pure, so it is tested without a server. */
export function etcdResults(s: EtcdStatusReply): CheckResult[] {
  const out: CheckResult[] = [];
  const leaders = new Set(s.members.flatMap((m) => (m.ok ? [m.leader] : [])));
  for (const m of s.members) {
    const id = `etcd.member ${m.endpoint}`;
    if (!m.ok) {
      out.push({ id, level: 'fail', message: `unreachable: ${m.error}`, fix: 'start that etcd member (systemctl status etcd on its host); the cluster keeps a quorum only while most members are up' });
      continue;
    }
    const role = m.isLeader ? 'leader' : `follower of ${m.leader}`;
    const message = `v${m.version}, db ${mib(m.dbSizeBytes)}, ${role}, raft index ${m.raftIndex}${m.errors.length ? `, errors: ${m.errors.join('; ')}` : ''}`;
    if (m.leader === '0') out.push({ id, level: 'fail', message: `${message}: no leader`, fix: 'the member cannot reach a quorum: check the other members and the peer network' });
    else if (m.errors.length) out.push({ id, level: 'warn', message, fix: 'see the errors the member reports (`nodelet etcd status`)' });
    else out.push({ id, level: 'pass', message });
  }
  if (leaders.size > 1) out.push({ id: 'etcd.leader', level: 'warn', message: `members disagree on the leader (${[...leaders].join(', ')})`, fix: 'an election is under way or the cluster is split; run doctor again' });
  if (!Array.isArray(s.alarms)) out.push({ id: 'etcd.alarms', level: 'warn', message: `alarms unknown: ${s.alarms.error}` });
  else if (s.alarms.length === 0) out.push({ id: 'etcd.alarms', level: 'pass', message: 'no alarms' });
  else {
    const nospace = s.alarms.some((a) => a.alarm === 'Nospace' || a.alarm === 'NOSPACE');
    out.push({
      id: 'etcd.alarms',
      level: 'fail',
      message: s.alarms.map((a) => `${a.alarm} on member ${a.memberId}`).join(', '),
      fix: nospace ? 'etcd is read-only until space is freed: `nodelet etcd defrag`, then disarm the alarm (etcdctl alarm disarm)' : 'a CORRUPT alarm needs the member restored from a snapshot (docs/ha.md "Backup and restore")',
    });
  }
  return out;
}

export function etcdCheck(o: { kubeconfig: string }): Check {
  return {
    id: 'etcd',
    title: 'etcd members',
    async run(signal): Promise<CheckResult[]> {
      let client: ApiClient;
      try {
        client = new ApiClient({ ...(await loadKubeconfig(o.kubeconfig)), timeoutMs: 10_000 });
      } catch (err) {
        return [{ id: 'etcd', level: 'skip', message: `server kubeconfig unusable: ${describeError(err)}` }];
      }
      try {
        const body = await client.getRaw(ETCD_STATUS_PATH, { signal, accept: 'application/json' });
        return etcdResults(JSON.parse(body.toString('utf8')) as EtcdStatusReply);
      } catch (err) {
        const code = errCode(err);
        if (code === 'ERR_NOT_FOUND') return [{ id: 'etcd', level: 'skip', message: 'the server does not use etcd (SQLite datastore)' }];
        if (code === 'ERR_PERMISSION_DENIED' || code === 'ERR_UNAUTHENTICATED') {
          return [{ id: 'etcd', level: 'skip', message: `the credential in ${o.kubeconfig} may not read the etcd status`, fix: 'pass --server-kubeconfig <server data dir>/admin.kubeconfig' }];
        }
        return [{ id: 'etcd', level: 'fail', message: `cannot read the etcd status from the server: ${describeError(err)}` }];
      } finally {
        client.close();
      }
    },
  };
}
