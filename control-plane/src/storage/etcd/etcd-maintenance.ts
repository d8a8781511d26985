/**
 * etcd's Maintenance API, per member: status (version, db size, leader, raft index), alarms,
 * defragmentation and snapshots. Used by `nodelet etcd …`, `nodelet doctor` and the server's
 * scheduled defragmentation (docs/ha.md "Backup and restore").
 *
 * Every call here is about ONE member, so each member gets its own short-lived client (the
 * store's client balances over all of them, which is right for data and wrong for maintenance).
 */
import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { AgentError, noopLogger, type Logger } from '@nodelet/base';
import { Etcd3, type ISnapshotResponse } from 'etcd3';
import type { EtcdTls } from './etcd-tls.js';

/** Which etcd to talk to: client URLs and the TLS material of the store (etcd-tls.ts). */
export interface EtcdTarget {
  endpoints: readonly string[];
  tls?: EtcdTls;
}

/** One member's answer to Maintenance.Status, or why it gave none. */
export type EtcdMemberStatus =
  | {
      endpoint: string;
      ok: true;
      /** Member ID, hex as etcdctl prints it. */
      memberId: string;
      version: string;
      dbSizeBytes: number;
      dbSizeInUseBytes: number;
      /** The leader this member believes in (hex member ID). */
      leader: string;
      isLeader: boolean;
      raftTerm: number;
      raftIndex: number;
      raftAppliedIndex: number;
      /** Alarm and health messages the member reports. */
      errors: string[];
    }
  | { endpoint: string; ok: false; error: string };

/** An alarm raised in the cluster (NOSPACE, CORRUPT). */
export interface EtcdAlarm {
  memberId: string;
  alarm: string;
}

const hex = (id: string | number): string => BigInt(id).toString(16);

function memberClient(endpoint: string, tls: EtcdTls | undefined): Etcd3 {
  const credentials = tls && endpoint.startsWith('https://') && {
    rootCertificate: (tls.ca ?? null) as Buffer,
    ...(tls.cert && tls.key ? { certChain: tls.cert, privateKey: tls.key } : {}),
  };
  return new Etcd3({ hosts: [endpoint], dialTimeout: 5_000, ...(credentials ? { credentials } : {}) });
}

async function withMember<T>(endpoint: string, tls: EtcdTls | undefined, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const c = memberClient(endpoint, tls);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

const deadline = (ms: number): { deadline: Date } => ({ deadline: new Date(Date.now() + ms) });

/** Status of every endpoint, in order; a member that does not answer within `timeoutMs` is `ok: false`. */
export async function etcdMemberStatuses(t: EtcdTarget, o: { timeoutMs?: number } = {}): Promise<EtcdMemberStatus[]> {
  const timeoutMs = o.timeoutMs ?? 5_000;
  return Promise.all(
    t.endpoints.map(async (endpoint): Promise<EtcdMemberStatus> => {
      try {
        const s = await withMember(endpoint, t.tls, (c) => c.maintenance.status(deadline(timeoutMs)));
        const memberId = hex(s.header.member_id);
        return {
          endpoint,
          ok: true,
          memberId,
          version: s.version,
          dbSizeBytes: Number(s.dbSize),
          dbSizeInUseBytes: Number(s.dbSizeInUse ?? 0),
          leader: hex(s.leader),
          isLeader: hex(s.leader) === memberId,
          raftTerm: Number(s.raftTerm),
          raftIndex: Number(s.raftIndex),
          raftAppliedIndex: Number(s.raftAppliedIndex ?? 0),
          errors: s.errors ?? [],
        };
      } catch (err) {
        return { endpoint, ok: false, error: (err as Error).message };
      }
    }),
  );
}

/** The alarms raised anywhere in the cluster, asked of the first endpoint that answers. */
export async function etcdAlarms(t: EtcdTarget, o: { timeoutMs?: number } = {}): Promise<EtcdAlarm[]> {
  return firstAnswer(t, 'list alarms', async (endpoint) => {
    const res = await withMember(endpoint, t.tls, (c) => c.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' }, deadline(o.timeoutMs ?? 5_000)));
    return res.alarms.map((a) => ({ memberId: hex(a.memberID), alarm: String(a.alarm) }));
  });
}

/**
 * Defragments each member in turn, never two at once: a member is blocked (no reads or writes)
 * while it rewrites its database, and one member at a time leaves the others a quorum. Stops at
 * the first failure and throws ERR_UNAVAILABLE naming the member; members after it are not touched.
 */
export async function defragmentEtcd(t: EtcdTarget, o: { timeoutMs?: number; logger?: Logger; signal?: AbortSignal } = {}): Promise<Array<{ endpoint: string; beforeBytes: number; afterBytes: number }>> {
  const log = o.logger ?? noopLogger;
  const out = [];
  for (const endpoint of t.endpoints) {
    o.signal?.throwIfAborted();
    try {
      const r = await withMember(endpoint, t.tls, async (c) => {
        const before = await c.maintenance.status(deadline(5_000));
        await c.maintenance.defragment(deadline(o.timeoutMs ?? 120_000));
        const after = await c.maintenance.status(deadline(5_000));
        return { endpoint, beforeBytes: Number(before.dbSize), afterBytes: Number(after.dbSize) };
      });
      log.info(r, 'Etcd member defragmented');
      out.push(r);
    } catch (err) {
      throw new AgentError('ERR_UNAVAILABLE', `defragment etcd member ${endpoint}: ${(err as Error).message}`, { cause: err });
    }
  }
  return out;
}

/** What {@link saveEtcdSnapshot} wrote. */
export interface SavedSnapshot {
  file: string;
  endpoint: string;
  bytes: number;
  /** sha256 of the whole file, hex. */
  sha256: string;
  /** The store revision the snapshot was taken at. */
  revision: number;
}

/**
 * Streams a snapshot (Maintenance.Snapshot, what `etcdctl snapshot save` uses) from the first
 * endpoint that answers into `file`: written to a temp file beside it with mode 0600 (it holds
 * every secret of the cluster), fsynced, then renamed, so `file` is either the old content or a
 * complete snapshot. etcd ends the stream with the sha256 of the database, which
 * `etcdctl snapshot restore` checks, so the file is restorable as is.
 */
export async function saveEtcdSnapshot(t: EtcdTarget, file: string, o: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<SavedSnapshot> {
  return firstAnswer(t, 'save snapshot', async (endpoint) => {
    const tmp = `${file}.part-${process.pid}`;
    const fh = await open(tmp, 'wx', 0o600);
    const hash = createHash('sha256');
    let bytes = 0;
    let revision = 0;
    let done = false;
    try {
      await withMember(endpoint, t.tls, async (c) => {
        const stream = await c.maintenance.snapshot(deadline(o.timeoutMs ?? 10 * 60_000));
        const cancel = (): void => (stream as unknown as { cancel(): void }).cancel();
        o.signal?.addEventListener('abort', cancel, { once: true });
        try {
          for await (const chunk of stream as unknown as AsyncIterable<ISnapshotResponse>) {
            if (!revision && chunk.header?.revision) revision = Number(chunk.header.revision);
            hash.update(chunk.blob);
            bytes += chunk.blob.length;
            await fh.write(chunk.blob);
          }
        } finally {
          o.signal?.removeEventListener('abort', cancel);
        }
        o.signal?.throwIfAborted();
      });
      if (bytes === 0) throw new AgentError('ERR_UNAVAILABLE', `etcd at ${endpoint} sent an empty snapshot`);
      await fh.sync();
      await fh.close();
      await rename(tmp, file);
      done = true;
      return { file, endpoint, bytes, sha256: hash.digest('hex'), revision };
    } finally {
      if (!done) {
        await fh.close().catch(() => undefined); // already closed after a failed rename: nothing to do
        await rm(tmp, { force: true });
      }
    }
  }, o.signal);
}

/** Runs `fn` against each endpoint in order until one succeeds; throws ERR_UNAVAILABLE with every reason. */
async function firstAnswer<T>(t: EtcdTarget, what: string, fn: (endpoint: string) => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (t.endpoints.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', `${what}: no etcd endpoint given`);
  const reasons: string[] = [];
  for (const endpoint of t.endpoints) {
    try {
      return await fn(endpoint);
    } catch (err) {
      signal?.throwIfAborted();
      reasons.push(`${endpoint}: ${(err as Error).message}`);
    }
  }
  throw new AgentError('ERR_UNAVAILABLE', `${what}: no etcd member answered (${reasons.join('; ')})`);
}

/** Live keys under `prefix` at `revision` (0: now), from the first member that answers. */
export async function countEtcdKeys(t: EtcdTarget, prefix: string, revision = 0, o: { timeoutMs?: number } = {}): Promise<number> {
  const key = Buffer.from(prefix);
  const end = Buffer.from(key);
  end[end.length - 1]!++;
  return firstAnswer(t, 'count keys', (endpoint) =>
    withMember(endpoint, t.tls, async (c) => Number((await c.kv.range({ key, range_end: end, revision, count_only: true }, deadline(o.timeoutMs ?? 10_000))).count)));
}

/** The cluster's current revision, from the first member that answers. */
export async function etcdRevision(t: EtcdTarget, o: { timeoutMs?: number } = {}): Promise<number> {
  return firstAnswer(t, 'read revision', (endpoint) =>
    withMember(endpoint, t.tls, async (c) => Number((await c.kv.range({ key: Buffer.from([0]), count_only: true }, deadline(o.timeoutMs ?? 10_000))).header!.revision)));
}
