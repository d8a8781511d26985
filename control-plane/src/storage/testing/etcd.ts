import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay } from '@nodelet/base';
import { freePort, terminateChild } from '@nodelet/base/testing';
import { createCa, issueCertificate, loadCa } from '../../pki/certs.js';

/** Debian's etcd-server binary (3.4.x). */
export const ETCD_BINARY = process.env.NODELET_TEST_ETCD ?? '/usr/bin/etcd';

/** Client-side TLS material of a TLS test etcd: files (for flags) and their contents. */
export interface TestEtcdTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export interface TestEtcd {
  /** Client URL, e.g. `http://127.0.0.1:41234` (`https://` with TLS). */
  readonly endpoint: string;
  /** CA and a client certificate (clientAuth, signed by that CA) when started with `tls`. */
  readonly tls?: TestEtcdTls;
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


/** True when etcd at `endpoint` answers `/health` with `"health":"true"` (needs quorum). */
export async function etcdHealthy(endpoint: string, tls?: TestEtcdTls): Promise<boolean> {
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
    return false;
  }
}

/**
 * The PKI of a test etcd, made with the control plane's own PKI code and written to `dir`: a CA
 * (`ca.crt`), one certificate per member for 127.0.0.1/localhost (`<name>.crt`, `.key`; usage
 * `server`, or `peer` where etcd 3.4 serves clients and peers and dials peers with one
 * certificate) and the API server's client certificate (`client.crt`, `.key`). Keys are 0600.
 */
export async function writeEtcdTestPki(dir: string, caName: string, members: Array<{ name: string; commonName: string; usage: 'server' | 'peer' }>): Promise<TestEtcdTls> {
  const caPair = await createCa(caName);
  const ca = await loadCa(caPair);
  const f = (name: string): string => join(dir, name);
  await writeFile(f('ca.crt'), caPair.certPem);
  for (const m of members) {
    const cert = await issueCertificate(ca, { commonName: m.commonName, usage: m.usage, ips: ['127.0.0.1'], dnsNames: ['localhost'] });
    await writeFile(f(`${m.name}.crt`), cert.certPem);
    await writeFile(f(`${m.name}.key`), cert.keyPem, { mode: 0o600 });
  }
  const client = await issueCertificate(ca, { commonName: 'nodelet-apiserver-etcd-client', usage: 'client' });
  await writeFile(f('client.crt'), client.certPem);
  await writeFile(f('client.key'), client.keyPem, { mode: 0o600 });
  return {
    caFile: f('ca.crt'),
    certFile: f('client.crt'),
    keyFile: f('client.key'),
    ca: Buffer.from(caPair.certPem),
    cert: Buffer.from(client.certPem),
    key: Buffer.from(client.keyPem),
  };
}

/** A single member's TLS: its PKI and the etcd flags that serve it with client-certificate auth. */
async function makeTls(dir: string): Promise<{ client: TestEtcdTls; args: string[] }> {
  const client = await writeEtcdTestPki(dir, 'nodelet-test-etcd-ca', [{ name: 'server', commonName: 'etcd', usage: 'server' }]);
  const f = (name: string): string => join(dir, name);
  return { client, args: [`--trusted-ca-file=${f('ca.crt')}`, `--cert-file=${f('server.crt')}`, `--key-file=${f('server.key')}`, '--client-cert-auth'] };
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
const terminate = (child: ChildProcess): Promise<void> => terminateChild(child, 5_000);

/**
 * Starts a private single-member etcd on loopback with fresh ports and a temp data dir, and
 * resolves once `/health` reports true. Ports are picked by binding port 0 and releasing it, so
 * another process may grab one in between; start is retried a few times for that race.
 */
export async function startTestEtcd(opts: { signal?: AbortSignal; startTimeoutMs?: number; tls?: boolean } = {}): Promise<TestEtcd> {
  const reason = etcdUnavailableReason();
  if (reason) throw new Error(reason);
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(opts.startTimeoutMs ?? 15_000, opts.signal, opts.tls ?? false);
    } catch (err) {
      lastErr = err;
      opts.signal?.throwIfAborted();
    }
  }
  throw lastErr;
}

async function startOnce(timeoutMs: number, signal: AbortSignal | undefined, withTls: boolean): Promise<TestEtcd> {
  const dataDir = await mkdtemp(join(tmpdir(), 'nodelet-etcd-'));
  // Certificates live beside the data dir, not in it (etcd owns its data dir's layout).
  const pkiDir = withTls ? await mkdtemp(join(tmpdir(), 'nodelet-etcd-pki-')) : undefined;
  let clientPort: number, peerPort: number, tls: Awaited<ReturnType<typeof makeTls>> | undefined;
  try {
    [clientPort, peerPort] = [await freePort(), await freePort()];
    tls = pkiDir ? await makeTls(pkiDir) : undefined;
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
    throw err;
  }
  // Client traffic is TLS with client-certificate auth; peer traffic (one member) stays plain.
  const client = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
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
    ...(tls?.args ?? []),
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
    while (!(await etcdHealthy(client, tls?.client))) {
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
    if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoint: client,
    ...(tls ? { tls: tls.client } : {}),
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
