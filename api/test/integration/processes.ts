/**
 * Real processes for the client integration tests: `nodelet server` from the sources and a
 * private etcd. Both run on loopback with fresh ports, are stopped by the PID we started, and
 * their temp dirs are removed by the caller.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, terminateChild } from '@nodelet/base/testing';
import { hasCode, pollUntil } from '@nodelet/base';
import { ApiClient, CLUSTERROLEBINDINGS, CONFIGMAPS, loadKubeconfig, SERVICEACCOUNTS, type KubeObject } from '../../src/index.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const ETCD = '/usr/bin/etcd';


/** SIGTERM to the PID we started, SIGKILL after 10 s. */
const terminate = (child: ChildProcess): Promise<void> => terminateChild(child, 10_000);

export interface ServerProcess {
  url: string;
  kubeconfig: string;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** The exit code or signal once the process has exited, else undefined. */
  exited(): number | string | undefined;
  stop(): Promise<void>;
}

/** Starts `nodelet server` (API server only) and resolves on its "Server ready" log line. */
export async function startServer(o: { dataDir: string; port: number; datastore?: string; timeoutMs?: number; args?: string[]; env?: Record<string, string> }): Promise<ServerProcess> {
  const args = [
    '--conditions=source', '--import', 'tsx', join(ROOT, 'bin', 'nodelet'), 'server',
    '--data-dir', o.dataDir, '--bind-address', '127.0.0.1', '--port', String(o.port),
    '--registry-address', '', '--disable-controllers', '--log-level', 'info',
    ...(o.datastore ? ['--datastore-endpoint', o.datastore] : []),
    ...(o.args ?? []),
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } });
  let output = '';
  const ready = new Promise<{ url: string; kubeconfig: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nodelet server did not become ready in ${o.timeoutMs ?? 30_000} ms:\n${output}`)), o.timeoutMs ?? 30_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"Server ready"')) continue;
        clearTimeout(timer);
        const rec = JSON.parse(line) as { url: string; kubeconfig: string };
        resolve({ url: rec.url, kubeconfig: rec.kubeconfig });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`nodelet server exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  try {
    const r = await ready;
    return { ...r, pid: child.pid ?? 0, output: () => output, exited: () => child.exitCode ?? child.signalCode ?? undefined, stop: () => terminate(child) };
  } catch (err) {
    await terminate(child);
    throw err;
  }
}

/**
 * A bearer token with cluster-admin rights on a `nodelet server` process, for tests that write
 * raw requests with an Authorization header. The server keeps no static admin token (its admin
 * credential is admin.kubeconfig's client certificate, docs/security.md), so this is what an
 * operator would do: a service account bound to cluster-admin, and a TokenRequest for it (an hour;
 * the account, the binding and the service-account key survive restarts).
 */
export async function adminBearerToken(kubeconfig: string): Promise<string> {
  const cfg = await loadKubeconfig(kubeconfig);
  const admin = new ApiClient(cfg);
  try {
    const ignoreExisting = (err: unknown): void => {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
    };
    await admin.create(SERVICEACCOUNTS, { metadata: { name: 'test-admin', namespace: 'kube-system' } }).catch(ignoreExisting);
    await admin.create(CLUSTERROLEBINDINGS, {
      metadata: { name: 'test-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'test-admin', namespace: 'kube-system' }],
    }).catch(ignoreExisting);
    const review = await admin.create<KubeObject, KubeObject & { status: { token: string } }>(SERVICEACCOUNTS, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { expirationSeconds: 3600 } } as KubeObject, { namespace: 'kube-system', name: 'test-admin', subresource: 'token' });
    const token = review.status.token;
    // The RBAC cache takes the new binding in shortly after the write.
    const probe = new ApiClient({ server: cfg.server, ...(cfg.ca ? { ca: cfg.ca } : {}), token });
    try {
      await pollUntil('the test-admin binding to take effect', () => probe.list(CONFIGMAPS, { namespace: 'kube-system', limit: 1 }).then(() => true, () => false), { timeoutMs: 10_000, intervalMs: 50 });
    } finally {
      probe.close();
    }
    return token;
  } finally {
    admin.close();
  }
}

export interface EtcdProcess {
  endpoint: string;
  /** Compacts etcd's history up to its current revision (what kube-apiserver's compactor does). */
  compactAll(): Promise<number>;
  stop(): Promise<void>;
}

/** A private single-member etcd on loopback, ready when /health says so. */
export async function startEtcd(dataDir: string): Promise<EtcdProcess> {
  if (!existsSync(ETCD)) throw new Error(`${ETCD} not found`);
  const [client, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${client}`;
  const child = spawn(ETCD, [
    '--name', 'itest', '--data-dir', dataDir,
    '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `itest=http://127.0.0.1:${peer}`,
  ], { stdio: 'ignore' });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok && ((await res.json()) as { health?: string }).health === 'true') break;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await terminate(child);
      throw new Error(`etcd did not become healthy on ${endpoint}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // etcd 3.4's JSON gateway (/v3/kv/...): no gRPC client needed for two calls.
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  return {
    endpoint,
    async compactAll() {
      const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
      const revision = Number((range.header as { revision: string }).revision);
      await post('/v3/kv/compaction', { revision: String(revision), physical: true });
      return revision;
    },
    stop: () => terminate(child),
  };
}
