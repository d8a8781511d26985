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
