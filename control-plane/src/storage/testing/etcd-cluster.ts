/**
 * A private etcd cluster for integration tests and benches: `size` members (default 3) of the
 * Debian etcd binary on loopback ports, TLS with client-certificate auth on both the client and
 * the peer ports, certificates from the control plane's own PKI code, everything in one temp dir.
 *
 *   startTestEtcdCluster() ─▶ members m0..m2 running, /health true on each
 *        kill(i)  ─ SIGKILL of member i (by PID); its data dir stays
 *        start(i) ─ member i again on the same ports and data (it catches up from the leader)
 *        stop()   ─ every member stopped by PID, the temp dir removed (idempotent)
 *
 * The single-member etcd with optional TLS is ./etcd.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdUnavailableReason, freePort, startEtcdMember, type TestProcess } from '@nodelet/base/testing';
import { writeEtcdTestPki, type TestEtcdTls } from './etcd.js';

export interface TestEtcdMember {
  readonly name: string;
  /** `https://127.0.0.1:<port>` */
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  /** PID of the running process, undefined while killed. */
  readonly pid: number | undefined;
}

export interface TestEtcdCluster {
  /** Every member's client URL, m0 first. */
  readonly endpoints: string[];
  /** The cluster's CA and a client certificate signed by it. */
  readonly tls: TestEtcdTls;
  readonly members: readonly TestEtcdMember[];
  /** SIGKILL of member `i` (by PID); resolves once it has exited. Its data dir is kept. */
  kill(i: number): Promise<void>;
  /** Starts member `i` again on its ports and data; resolves once its /health is true. */
  start(i: number): Promise<void>;
  /** Stops every member (SIGTERM, then SIGKILL) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface TestEtcdClusterOptions {
  size?: number;
  signal?: AbortSignal;
  /** Per start of the cluster or of one member. Default 20 s. */
  startTimeoutMs?: number;
}

interface Member extends TestEtcdMember {
  args: string[];
  initialCluster: string;
  proc: TestProcess | undefined;
}

/**
 * Starts the cluster and resolves once every member is healthy. Ports are picked by binding port
 * 0 and releasing it, so another process may take one in between: the start is retried.
 */
export async function startTestEtcdCluster(o: TestEtcdClusterOptions = {}): Promise<TestEtcdCluster> {
  const reason = etcdUnavailableReason();
  if (reason) throw new Error(reason);
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(o.size ?? 3, o.startTimeoutMs ?? 20_000, o.signal);
    } catch (err) {
      lastErr = err;
      o.signal?.throwIfAborted();
    }
  }
  throw lastErr;
}

async function startOnce(size: number, timeoutMs: number, signal: AbortSignal | undefined): Promise<TestEtcdCluster> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-etcd-cluster-'));
  const members: Member[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(members.map((m) => m.proc?.stop()));
    await rm(root, { recursive: true, force: true });
  };

  const launch = async (m: Member): Promise<void> => {
    if (stopped) throw new Error('etcd cluster was stopped');
    if (m.proc) throw new Error(`etcd member ${m.name} is running`);
    m.proc = await startEtcdMember({
      name: m.name, dataDir: m.dataDir, clientUrl: m.clientUrl, peerUrl: m.peerUrl, initialCluster: m.initialCluster, args: m.args, tls,
      readyTimeoutMs: timeoutMs, ...(signal ? { signal } : {}),
    });
  };

  let tls!: TestEtcdTls;
  try {
    const ports: number[] = [];
    for (let i = 0; i < size * 2; i++) ports.push(await freePort());
    const names = Array.from({ length: size }, (_, i) => `m${i}`);
    const peerUrls = names.map((_, i) => `https://127.0.0.1:${ports[2 * i + 1]}`);
    const initialCluster = names.map((n, i) => `${n}=${peerUrls[i]}`).join(',');
    const pki = join(root, 'pki');
    await mkdir(pki, { mode: 0o700 });
    const f = (name: string): string => join(pki, name);
    tls = await writeClusterPki(pki, size);
    const token = `nodelet-test-${randomUUID()}`;
    for (let i = 0; i < size; i++) {
      const name = names[i]!;
      const clientUrl = `https://127.0.0.1:${ports[2 * i]}`;
      const dataDir = join(root, name);
      members.push({
        name,
        clientUrl,
        peerUrl: peerUrls[i]!,
        dataDir,
        get pid() {
          return (this as Member).proc?.pid;
        },
        proc: undefined,
        initialCluster,
        args: [
          '--initial-cluster-state=new',
          `--initial-cluster-token=${token}`,
          `--trusted-ca-file=${f('ca.crt')}`,
          `--cert-file=${f(`${name}.crt`)}`,
          `--key-file=${f(`${name}.key`)}`,
          '--client-cert-auth',
          `--peer-trusted-ca-file=${f('ca.crt')}`,
          `--peer-cert-file=${f(`${name}.crt`)}`,
          `--peer-key-file=${f(`${name}.key`)}`,
          '--peer-client-cert-auth',
        ],
      });
    }
    // All at once: a new cluster has no leader (and no healthy member) until a quorum is up.
    const started = await Promise.allSettled(members.map((m) => launch(m)));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    await stop();
    throw err;
  }

  const member = (i: number): Member => {
    const m = members[i];
    if (!m) throw new Error(`no etcd member ${i} (cluster of ${members.length})`);
    return m;
  };
  return {
    endpoints: members.map((m) => m.clientUrl),
    tls,
    members,
    kill: async (i) => {
      const m = member(i);
      await m.proc?.kill('SIGKILL');
      await m.proc?.stop(); // gone already: this removes its output file
      m.proc = undefined;
    },
    start: async (i) => {
      await launch(member(i));
    },
    stop,
  };
}

/** CA, one peer-and-serving certificate per member (m0..), one client certificate. */
function writeClusterPki(dir: string, size: number): Promise<TestEtcdTls> {
  return writeEtcdTestPki(dir, 'nodelet-test-etcd-cluster-ca', Array.from({ length: size }, (_, i) => ({ name: `m${i}`, commonName: `m${i}`, usage: 'peer' as const })));
}
