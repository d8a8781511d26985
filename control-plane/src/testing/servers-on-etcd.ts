/**
 * Several in-process control planes on one etcd, for fail-over tests: server 0 creates the PKI
 * and the admin token, the others start from a copy of them (the same CA, serving certificate,
 * service-account key and admin token), so one client and one kubeconfig reach every server.
 * No controllers run (leader election decides who runs them; this is about the API servers).
 */
import { cp as copy, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, type Logger } from '@nodelet/base';
import { startControlPlane, type ControlPlane } from '../control-plane.js';
import type { EtcdTlsFiles } from '../storage/index.js';

export interface ServersOnEtcd {
  /** `https://127.0.0.1:<port>` of each server, in start order. */
  readonly urls: string[];
  readonly adminToken: string;
  readonly caPem: string;
  /** The running control plane `i`, undefined once stopped. */
  server(i: number): ControlPlane | undefined;
  /** Stops server `i` (its listener and connections go away). Idempotent. */
  stop(i: number): Promise<void>;
  /** Stops every server and removes their data dirs. Idempotent. */
  close(): Promise<void>;
}

export async function startServersOnEtcd(o: { endpoint: string; etcdTls?: EtcdTlsFiles; count?: number; logger?: Logger }): Promise<ServersOnEtcd> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-servers-'));
  const servers: Array<ControlPlane | undefined> = [];
  const close = async (): Promise<void> => {
    for (let i = 0; i < servers.length; i++) await stop(i);
    await rm(root, { recursive: true, force: true });
  };
  const stop = async (i: number): Promise<void> => {
    const s = servers[i];
    servers[i] = undefined;
    await s?.close();
  };
  try {
    for (let i = 0; i < (o.count ?? 2); i++) {
      const dataDir = join(root, `server-${i}`);
      if (i > 0) {
        await mkdir(dataDir, { recursive: true });
        await copy(join(root, 'server-0', 'pki'), join(dataDir, 'pki'), { recursive: true });
        await copy(join(root, 'server-0', 'admin.token'), join(dataDir, 'admin.token'));
      }
      servers.push(
        await startControlPlane({
          dataDir,
          datastoreEndpoint: o.endpoint,
          ...(o.etcdTls ? { etcdTls: o.etcdTls } : {}),
          bindAddress: '127.0.0.1',
          port: 0,
          registryAddress: '',
          controllers: false,
          logger: o.logger ?? noopLogger,
        }),
      );
    }
  } catch (err) {
    await close();
    throw err;
  }
  const first = servers[0]!;
  return {
    urls: servers.map((s) => s!.url),
    adminToken: first.adminToken,
    caPem: first.caPem,
    server: (i) => servers[i],
    stop,
    close,
  };
}
