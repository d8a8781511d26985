import { join } from 'node:path';
import { AgentError, type Logger } from '@nodelet/base';
import type { CompactorOptions } from './compactor.js';
import type { DefragSchedule } from './etcd/etcd-defragmenter.js';
import { createEtcdStore } from './etcd/etcd-store.js';
import { checkEtcdTlsFlags, loadEtcdTls, wantsEtcdTls, type EtcdTlsFiles } from './etcd/etcd-tls.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

export type DatastoreEndpoint = { kind: 'sqlite'; path: string } | { kind: 'etcd'; endpoints: string[]; tls: boolean };

/**
 * Parses `--datastore-endpoint` (k3s' flag name) together with the etcd TLS flags:
 * - empty / undefined → `sqlite://<dataDir>/state.db`
 * - `sqlite://<path>` (absolute `sqlite:///var/lib/x.db` or relative to dataDir `sqlite://x.db`)
 * - `etcd://host:port[,host:port...]` → `https://` client URLs when a TLS flag is given, else `http://`
 * - `https://host:port[,...]` → TLS (the system roots unless `--etcd-cafile`)
 * - `http://host:port[,...]` → plaintext; refused together with a TLS flag, which it would ignore
 *
 * Throws ERR_INVALID_ARGUMENT saying what would work.
 */
export function parseDatastoreEndpoint(endpoint: string | undefined, dataDir: string, tlsFiles?: EtcdTlsFiles): DatastoreEndpoint {
  const e = (endpoint ?? '').trim();
  const tlsFlags = wantsEtcdTls(tlsFiles);
  if (tlsFiles) checkEtcdTlsFlags(tlsFiles);
  if (e === '' || e.startsWith('sqlite://')) {
    if (tlsFlags) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `--etcd-cafile/--etcd-certfile/--etcd-keyfile apply only to an etcd datastore (--datastore-endpoint etcd://… or https://…), not to SQLite${e ? ` ("${e}")` : ''}`);
    }
    if (e === '') return { kind: 'sqlite', path: join(dataDir, 'state.db') };
    const path = e.slice('sqlite://'.length).split('?')[0]!;
    if (path === '') throw bad(e, 'sqlite:// needs a file path, e.g. sqlite:///var/lib/nodelet/state.db');
    return { kind: 'sqlite', path: path.startsWith('/') ? path : join(dataDir, path) };
  }
  const etcd = e.startsWith('etcd://');
  if (etcd || e.startsWith('http://') || e.startsWith('https://')) {
    const hosts = (etcd ? e.slice('etcd://'.length) : e).split(',').map((h) => h.trim()).filter(Boolean);
    if (hosts.length === 0) throw bad(e, 'no etcd host given');
    const scheme = etcd ? (tlsFlags ? 'https:' : 'http:') : undefined;
    const endpoints = hosts.map((h) => {
      const url = /^https?:\/\//.test(h) ? h : `${scheme ?? 'http:'}//${h}`;
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        throw bad(e, `"${h}" is not host:port`);
      }
      if (!u.port) throw bad(e, `"${h}" is not host:port`);
      return `${scheme ?? u.protocol}//${u.host}`;
    });
    const tls = endpoints[0]!.startsWith('https:');
    if (endpoints.some((u) => u.startsWith('https:') !== tls)) throw bad(e, 'all etcd endpoints must use the same scheme (all https:// or all http://)');
    if (!tls && tlsFlags) {
      throw bad(e, 'http:// is plaintext and the TLS flags would be ignored; use https://host:port or etcd://host:port with --etcd-cafile/--etcd-certfile/--etcd-keyfile');
    }
    return { kind: 'etcd', endpoints, tls };
  }
  throw bad(e, 'use sqlite://<path>, etcd://host:port[,host:port], https://host:port or http://host:port');
}

function bad(endpoint: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid datastore endpoint "${endpoint}": ${why}`);
}

export interface OpenStoreOptions {
  /** Where the default SQLite file lives. */
  dataDir: string;
  logger?: Logger;
  /** Background compaction; default every 5 min keeping 1000 revisions. `false` disables it. */
  compactor?: CompactorOptions | false;
  /** etcd only: `--etcd-defrag-schedule-cron` / `--etcd-defrag-interval`, scheduled defragmentation (default off). */
  etcdDefrag?: DefragSchedule;
  /** etcd key prefix (tests); default none, keys are `/registry/...` as given. */
  etcdPrefix?: string;
  /** `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile` (kube-apiserver's flags). */
  etcdTls?: EtcdTlsFiles;
}

/**
 * Opens the store `--datastore-endpoint` names (see {@link parseDatastoreEndpoint}). Reads the
 * TLS files once, here; a bad combination or unusable file throws ERR_INVALID_ARGUMENT.
 */
export function openStore(endpoint: string | undefined, opts: OpenStoreOptions): Store {
  const parsed = parseDatastoreEndpoint(endpoint, opts.dataDir, opts.etcdTls);
  const compactor = opts.compactor === false ? undefined : (opts.compactor ?? {});
  if (parsed.kind === 'sqlite') return createSqliteStore({ path: parsed.path, logger: opts.logger, compactor });
  const tls = parsed.tls ? loadEtcdTls(opts.etcdTls ?? {}) : undefined;
  return createEtcdStore({ endpoints: parsed.endpoints, prefix: opts.etcdPrefix, logger: opts.logger, compactor, tls, ...(opts.etcdDefrag ? { defrag: opts.etcdDefrag } : {}) });
}
