import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay } from '@nodelet/base';
import { terminateChild } from '@nodelet/base/testing';

/** Debian's etcd-server binary (3.4.x). */
export const ETCD_BINARY = process.env.NODELET_TEST_ETCD ?? '/usr/bin/etcd';

export interface TestEtcd {
  /** Client URL, e.g. `http://127.0.0.1:41234`. */
  readonly endpoint: string;
  /** PID of the running etcd (changes on restart). */
  readonly pid: number;
  readonly dataDir: string;
  /** Stops etcd (SIGTERM, by PID) and starts it again on the same ports and data. */
  restart(): Promise<void>;
  /** Stops this etcd (by PID) and removes its data dir. Idempotent. */
  stop(): Promise<void>;
}

/** Why etcd tests cannot run here, or undefined when they can (for `{ skip: ... }`). */
export function etcdUnavailableReason(): string | undefined {
  return existsSync(ETCD_BINARY) ? undefined : `${ETCD_BINARY} not found (apt-get install etcd-server)`;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { health?: string };
    return res.ok && body.health === 'true';
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
const terminate = (child: ChildProcess): Promise<void> => terminateChild(child, 5_000);

/**
 * Starts a private single-member etcd on loopback with fresh ports and a temp data dir, and
 * resolves once `/health` reports true. Ports are picked by binding port 0 and releasing it, so
 * another process may grab one in between; start is retried a few times for that race.
 */
export async function startTestEtcd(opts: { signal?: AbortSignal; startTimeoutMs?: number } = {}): Promise<TestEtcd> {
  const reason = etcdUnavailableReason();
  if (reason) throw new Error(reason);
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(opts.startTimeoutMs ?? 15_000, opts.signal);
    } catch (err) {
      lastErr = err;
      opts.signal?.throwIfAborted();
    }
  }
  throw lastErr;
}

async function startOnce(timeoutMs: number, signal?: AbortSignal): Promise<TestEtcd> {
  const dataDir = await mkdtemp(join(tmpdir(), 'nodelet-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name=nodelet-test',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=nodelet-test=${peer}`,
    '--logger=zap',
    '--log-level=error',
  ];
  let child: ChildProcess | undefined;
  // If the test process dies without calling stop(), do not leave etcd running.
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const launch = async (): Promise<void> => {
    const proc = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const deadline = Date.now() + timeoutMs;
    while (!(await healthy(client))) {
      if (proc.exitCode !== null) throw new Error(`etcd exited with code ${proc.exitCode}: ${stderr.trim()}`);
      if (Date.now() > deadline) throw new Error(`etcd at ${client} not healthy after ${timeoutMs} ms: ${stderr.trim()}`);
      await delay(100, signal);
    }
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killOnExit);
    if (child) await terminate(child);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoint: client,
    get pid() {
      return child!.pid!;
    },
    dataDir,
    restart: async () => {
      if (stopped) throw new Error('etcd was stopped');
      await terminate(child!);
      await launch();
    },
    stop,
  };
}
