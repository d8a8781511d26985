import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError, type Logger } from '@nodelet/base';
import type { CompactorOptions } from './compactor.js';
import { createEtcdStore } from './etcd/etcd-store.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

export type DatastoreEndpoint = { kind: 'sqlite'; path: string } | { kind: 'etcd'; endpoints: string[] };

/**
 * Parses `--datastore-endpoint` (k3s' flag name):
 * - empty / undefined → `sqlite://<dataDir>/state.db`
 * - `sqlite://<path>` (absolute `sqlite:///var/lib/x.db` or relative to dataDir `sqlite://x.db`)
 * - `etcd://host:port[,host:port...]` → `http://host:port` client URLs
 * - `http://host:port[,...]` / `https://...` → used as given
 */
export function parseDatastoreEndpoint(endpoint: string | undefined, dataDir: string): DatastoreEndpoint {
  const e = (endpoint ?? '').trim();
  if (e === '') return { kind: 'sqlite', path: join(dataDir, 'state.db') };
  if (e.startsWith('sqlite://')) {
    const path = e.slice('sqlite://'.length).split('?')[0]!;
    if (path === '') throw bad(e, 'sqlite:// needs a file path, e.g. sqlite:///var/lib/nodelet/state.db');
    return { kind: 'sqlite', path: path.startsWith('/') ? path : join(dataDir, path) };
  }
  const etcd = e.startsWith('etcd://');
  if (etcd || e.startsWith('http://') || e.startsWith('https://')) {
    const hosts = (etcd ? e.slice('etcd://'.length) : e).split(',').map((h) => h.trim()).filter(Boolean);
    if (hosts.length === 0) throw bad(e, 'no etcd host given');
    const endpoints = hosts.map((h) => {
      const url = /^https?:\/\//.test(h) ? h : `http://${h}`;
      try {
        const u = new URL(url);
        if (!u.port) throw new Error('missing port');
        return `${u.protocol}//${u.host}`;
      } catch {
        throw bad(e, `"${h}" is not host:port`);
      }
    });
    return { kind: 'etcd', endpoints };
  }
  throw bad(e, 'use sqlite://<path>, etcd://host:port[,host:port] or http://host:port');
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
  /** etcd key prefix (tests); default none, keys are `/registry/...` as given. */
  etcdPrefix?: string;
  /** PEM files for `https://` etcd endpoints (k3s: --datastore-cafile/-certfile/-keyfile). */
  etcdTls?: { caFile: string; certFile?: string; keyFile?: string };
}

/** Opens the store `--datastore-endpoint` names (see {@link parseDatastoreEndpoint}). */
export function openStore(endpoint: string | undefined, opts: OpenStoreOptions): Store {
  const parsed = parseDatastoreEndpoint(endpoint, opts.dataDir);
  const compactor = opts.compactor === false ? undefined : (opts.compactor ?? {});
  if (parsed.kind === 'sqlite') return createSqliteStore({ path: parsed.path, logger: opts.logger, compactor });
  const t = opts.etcdTls;
  const tls = t && {
    ca: readPem(t.caFile),
    ...(t.certFile && t.keyFile ? { cert: readPem(t.certFile), key: readPem(t.keyFile) } : {}),
  };
  return createEtcdStore({ endpoints: parsed.endpoints, prefix: opts.etcdPrefix, logger: opts.logger, compactor, tls });
}

function readPem(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read etcd TLS file "${path}"`, { cause: err });
  }
}
