/**
 * One `nodelet server` child process on a fixed port for benches that kill and restart servers
 * (bench/ha.ts): started from the built dist (or the sources with `source`), ready when
 * `/readyz` answers, killed with SIGKILL by the PID it was started with.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp as copy, mkdir, readFile } from 'node:fs/promises';
import https from 'node:https';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '@nodelet/base';
import { childExited, terminateChild } from '@nodelet/base/testing';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServerProcessOptions {
  dataDir: string;
  port: number;
  /** `--datastore-endpoint`. */
  etcd: string;
  /** Run bin/nodelet-dev (the TypeScript sources) instead of the built dist. */
  source?: boolean;
  /** Flags after the common ones (default: `--disable-controllers --log-level=warn`). */
  flags?: string[];
}

export class ServerProcess {
  child: ChildProcess | undefined;
  /** holderIdentity of this server's leader Leases, from its "Server ready" line (with --log-level info). */
  leaderIdentity: string | undefined;
  constructor(readonly o: ServerProcessOptions) {}

  get dataDir(): string {
    return this.o.dataDir;
  }

  get url(): string {
    return `https://127.0.0.1:${this.o.port}`;
  }

  async start(): Promise<void> {
    const bin = this.o.source ? [join(ROOT, 'bin/nodelet-dev')] : [process.execPath, join(ROOT, 'bin/nodelet')];
    const flags = [
      'server', `--data-dir=${this.o.dataDir}`, `--datastore-endpoint=${this.o.etcd}`, '--bind-address=127.0.0.1', `--port=${this.o.port}`, '--registry-address=',
      ...(this.o.flags ?? ['--disable-controllers', '--log-level=warn']),
    ];
    const child = (this.child = spawn(bin[0]!, [...bin.slice(1), ...flags], { stdio: ['ignore', 'pipe', 'ignore'] }));
    // Read until the "Server ready" line (its leaderIdentity); later output is drained unread.
    let out = '';
    let found = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      if (found) return;
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.includes('"Server ready"'));
      if (!line) return;
      found = true;
      this.leaderIdentity = (JSON.parse(line) as { leaderIdentity?: string }).leaderIdentity;
      out = '';
    });
    await pollUntil(`server on ${this.o.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`server on ${this.o.port} exited with ${child.exitCode}`);
      return readyz(this.url);
    }, { timeoutMs: 60_000, intervalMs: 50 });
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    child.kill('SIGKILL');
    await childExited(child);
  }

  async stop(): Promise<void> {
    if (this.child) await terminateChild(this.child, 5_000);
    this.child = undefined;
  }
}

/**
 * `/readyz` answers 200. The server's CA is not known before its first start, and this only asks
 * "is it serving": certificate checks are the ApiClient's job, so none here.
 */
function readyz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(`${url}/readyz`, { rejectUnauthorized: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * Starts `second` as a second server of `first`'s control plane: `first` starts and makes the
 * PKI, `second` gets a copy of it (what `nodelet install server --join` fetches, docs/ha.md) and
 * starts. Returns the admin credential both accept: `first`'s admin client certificate (the one
 * in its admin.kubeconfig, signed by the shared CA).
 */
export async function startServerPair(first: ServerProcess, second: ServerProcess): Promise<{ cert: string; key: string; ca: Buffer }> {
  await first.start();
  await pollUntil('admin kubeconfig', () => readFile(join(first.dataDir, 'admin.kubeconfig')).then(() => true, () => false), { timeoutMs: 30_000 });
  await mkdir(second.dataDir, { recursive: true });
  await copy(join(first.dataDir, 'pki'), join(second.dataDir, 'pki'), { recursive: true });
  await second.start();
  const pki = join(first.dataDir, 'pki');
  return { cert: await readFile(join(pki, 'admin.crt'), 'utf8'), key: await readFile(join(pki, 'admin.key'), 'utf8'), ca: await readFile(join(pki, 'ca.crt')) };
}
