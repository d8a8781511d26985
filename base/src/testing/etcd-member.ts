/**
 * One etcd member as a child process of a test or a bench, on the test-process kit
 * (./test-process.ts): ready when its `/health` says true, stopped by PID. The single-member and
 * cluster fixtures with their PKI (control-plane/src/storage/testing/) start their members with it.
 */
import { existsSync } from 'node:fs';
import https from 'node:https';
import { startTestProcess, type TestProcess } from './test-process.js';
import type { AfterHookHost } from './cleanups.js';

/** Debian's etcd-server binary (3.4.x); NODELET_TEST_ETCD overrides. */
export const ETCD_BINARY = process.env.NODELET_TEST_ETCD ?? '/usr/bin/etcd';

/** Why etcd tests cannot run here, or undefined when they can (for `{ skip: ... }`). */
export function etcdUnavailableReason(): string | undefined {
  return existsSync(ETCD_BINARY) ? undefined : `${ETCD_BINARY} not found (apt-get install etcd-server)`;
}

/** The client certificate and CA that a TLS member's `/health` asks for. */
export interface EtcdClientTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** True when etcd at `endpoint` answers `/health` with `"health":"true"` (needs quorum). */
export async function etcdHealthy(endpoint: string, tls?: EtcdClientTls): Promise<boolean> {
  try {
    if (!tls) {
      const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: string };
      return res.ok && body.health === 'true';
    }
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.get(`${endpoint}/health`, { ca: tls.ca, cert: tls.cert, key: tls.key, timeout: 1000 }, (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => (res.statusCode === 200 ? resolve(data) : reject(new Error(`HTTP ${res.statusCode}`))));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
    });
    return (JSON.parse(body) as { health?: string }).health === 'true';
  } catch {
    // Not serving yet, or no quorum: the caller polls.
    return false;
  }
}

export interface EtcdMemberOptions {
  /** `--name`. */
  name: string;
  dataDir: string;
  /** Listen and advertise client URL (`http://127.0.0.1:<port>`, `https://` with TLS flags in `args`). */
  clientUrl: string;
  /** Listen and advertise peer URL. */
  peerUrl: string;
  /** `--initial-cluster`; default this member alone. Left out with `restore`-made data (it has its own). */
  initialCluster?: string | false;
  /** Further flags (TLS files, `--initial-cluster-state`, a token). */
  args?: readonly string[];
  /** Client certificate for the `/health` readiness check of a member with client-certificate auth. */
  tls?: EtcdClientTls;
  logFile?: string;
  /** Default 20 s. */
  readyTimeoutMs?: number;
  /** Registers stop() with `cleanups(t)`. */
  t?: AfterHookHost;
  signal?: AbortSignal;
}

/**
 * Starts the member and resolves once its `/health` is true. A member of a new cluster is healthy
 * only once a quorum runs: start the members together (`Promise.allSettled`).
 */
export function startEtcdMember(o: EtcdMemberOptions): Promise<TestProcess<true>> {
  const reason = etcdUnavailableReason();
  if (reason) return Promise.reject(new Error(reason));
  const initialCluster = o.initialCluster ?? `${o.name}=${o.peerUrl}`;
  return startTestProcess({
    name: `etcd ${o.name}`,
    command: ETCD_BINARY,
    args: [
      `--name=${o.name}`, `--data-dir=${o.dataDir}`,
      `--listen-client-urls=${o.clientUrl}`, `--advertise-client-urls=${o.clientUrl}`,
      `--listen-peer-urls=${o.peerUrl}`, `--initial-advertise-peer-urls=${o.peerUrl}`,
      ...(initialCluster ? [`--initial-cluster=${initialCluster}`] : []),
      '--logger=zap', '--log-level=error',
      ...(o.args ?? []),
    ],
    ready: async () => (await etcdHealthy(o.clientUrl, o.tls)) || undefined,
    readyTimeoutMs: o.readyTimeoutMs ?? 20_000,
    graceMs: 5_000,
    ...(o.logFile ? { logFile: o.logFile } : {}),
    ...(o.t ? { t: o.t } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
