import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { etcdUnavailableReason, freePort, startEtcdMember, type TestProcess } from '@nodelet/base/testing';
import { createCa, issueCertificate, loadCa } from '../../pki/certs.js';

export { ETCD_BINARY, etcdHealthy, etcdUnavailableReason } from '@nodelet/base/testing';

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

/**
 * The one test etcd of a test file: started before the file's tests and stopped after them
 * (top-level `before`/`after`, so call it at the top level). `skip` says why the tests cannot run
 * here (no etcd binary) for `describe(…, { skip })`; `etcd()` is the running member.
 */
export function etcdForFile(): { skip: string | false; etcd: () => TestEtcd } {
  const skip = etcdUnavailableReason() ?? false;
  let etcd: TestEtcd | undefined;
  before(async () => {
    if (!skip) etcd = await startTestEtcd();
  });
  after(async () => {
    await etcd?.stop();
  });
  return {
    skip,
    etcd: () => {
      if (!etcd) throw new Error('the test etcd is not running (etcdForFile: called outside a test, or skipped)');
      return etcd;
    },
  };
}

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
  let member: TestProcess | undefined;
  const launch = async (): Promise<void> => {
    member = await startEtcdMember({
      name: 'nodelet-test', dataDir, clientUrl: client, peerUrl: peer, args: tls?.args ?? [],
      ...(tls ? { tls: tls.client } : {}), readyTimeoutMs: timeoutMs, ...(signal ? { signal } : {}),
    });
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await member?.stop();
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
      return member!.pid;
    },
    dataDir,
    restart: async () => {
      if (stopped) throw new Error('etcd was stopped');
      await member!.stop();
      await launch();
    },
    stop,
  };
}
