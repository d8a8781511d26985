/**
 * Test harness for the kubectl e2e suites: an in-process `nodelet server` (HTTPS + admin token,
 * SQLite in a temp dir, port 0 on 127.0.0.1), the real `/usr/bin/kubectl` with a fresh
 * `--cache-dir` per test, and a raw HTTPS client for the bad-input cases.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS, startControlPlane, type ControlPlane, type ControlPlaneOptions } from '@nodelet/control-plane';
import { startTestEtcd, type TestEtcd } from '../../control-plane/src/storage/testing/etcd.js';

export const KUBECTL = process.env.NODELET_TEST_KUBECTL ?? '/usr/bin/kubectl';

/**
 * Why the kubectl suites cannot run here, or undefined. They need kubectl 1.32 (the version the
 * server's `/version` names; Debian's `kubernetes-client` is 1.20 and too old): the machine
 * image's `/usr/bin/kubectl`, or any 1.32 binary named by NODELET_TEST_KUBECTL. Under CI a skip
 * fails the run (scripts/run-tests.mjs), so a machine without it fails with this message.
 */
export function kubectlUnavailableReason(): string | undefined {
  return existsSync(KUBECTL) ? undefined : `kubectl 1.32 not found at ${KUBECTL}: install it there or set NODELET_TEST_KUBECTL to a kubectl 1.32 binary`;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  (args: readonly string[], opts?: { stdin?: string; env?: Record<string, string>; timeoutMs?: number }): Promise<RunResult>;
  /** Starts kubectl and returns the child (for `get -w`, `delete` that waits); `env` is added to ours. */
  spawn(args: readonly string[], opts?: { env?: Record<string, string> }): { done: Promise<RunResult>; output: () => string; errors: () => string; kill: () => void };
}

export interface ApiReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface KubectlEnv {
  cp: ControlPlane;
  dir: string;
  /**
   * A kubectl with its own fresh cache dir, bound to the admin kubeconfig, or with `token` to a
   * kubeconfig holding only that bearer token (the admin's is a client certificate, which the
   * server would believe before any `--token`, as kube-apiserver does).
   */
  newKubectl(o?: { token?: string }): Promise<Kubectl>;
  /** Raw request to the server (CA-verified TLS); token defaults to the admin token, `null` = none. */
  api(method: string, path: string, o?: { body?: string | Buffer; contentType?: string; token?: string | null; accept?: string }): Promise<ApiReply>;
  close(): Promise<void>;
}

/**
 * Starts the server on SQLite, or on a private etcd when NODELET_TEST_DATASTORE=etcd (the same
 * suites then run against the etcd backend) or `o.datastore` says so (a suite that runs on both);
 * `extra` adds control-plane options (e.g. `podSecurity`).
 */
export async function startKubectlEnv(extra: Partial<ControlPlaneOptions> = {}, o: { datastore?: 'sqlite' | 'etcd' } = {}): Promise<KubectlEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-kubectl-'));
  let cp: ControlPlane;
  let etcd: TestEtcd | undefined;
  try {
    if ((o.datastore ?? (process.env.NODELET_TEST_DATASTORE === 'etcd' ? 'etcd' : 'sqlite')) === 'etcd') etcd = await startTestEtcd();
    cp = await startControlPlane({
      dataDir: dir,
      bindAddress: '127.0.0.1',
      port: 0,
      registryAddress: '',
      // The API machinery alone, plus what every new namespace needs (a default service account
      // and the root CA) so pods can be created in the namespaces the suites make.
      controllers: NAMESPACE_SETUP_CONTROLLERS,
      logger: noopLogger,
      ...(etcd ? { datastoreEndpoint: etcd.endpoint } : {}),
      ...extra,
    });
  } catch (err) {
    await etcd?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let caches = 0;
  const newKubectl = async (o: { token?: string } = {}): Promise<Kubectl> => {
    const n = ++caches;
    const cacheDir = join(dir, `cache-${n}`);
    let kubeconfig = cp.kubeconfigPath;
    if (o.token !== undefined) {
      kubeconfig = join(dir, `token-${n}.kubeconfig`);
      const cluster = { server: cp.url, 'certificate-authority-data': Buffer.from(cp.caPem).toString('base64') };
      const doc = { apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster }], users: [{ name: 'u', user: { token: o.token } }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }], 'current-context': 'c' };
      await writeFile(kubeconfig, JSON.stringify(doc), { mode: 0o600 });
    }
    const base = ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir];
    const run = ((args, opts = {}) =>
      new Promise<RunResult>((resolve) => {
        const child = execFile(KUBECTL, [...base, ...args], { env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        });
        if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
      })) as Kubectl;
    run.spawn = (args, opts = {}) => {
      let out = '';
      let err = '';
      const child = execFile(KUBECTL, [...base, ...args], { timeout: 60_000, env: { ...process.env, ...opts.env } });
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const done = new Promise<RunResult>((resolve) => child.on('exit', (code) => resolve({ code: code ?? 1, stdout: out, stderr: err })));
      return { done, output: () => out, errors: () => err, kill: () => void child.kill('SIGTERM') };
    };
    return run;
  };
  const api: KubectlEnv['api'] = (method, path, o = {}) => httpsRequest(cp.url, cp.caPem, o.token === undefined ? cp.adminToken : o.token, method, path, o);
  return {
    cp,
    dir,
    newKubectl,
    api,
    async close() {
      await cp.close();
      await etcd?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One HTTPS request verified against `ca`; `token` null sends no Authorization header. */
export function httpsRequest(
  base: string,
  ca: string,
  token: string | null,
  method: string,
  path: string,
  o: { body?: string | Buffer; contentType?: string; accept?: string } = {},
): Promise<ApiReply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, base),
      {
        method,
        ca,
        agent: false,
        headers: {
          ...(token !== null ? { Authorization: `Bearer ${token}` } : {}),
          ...(o.contentType ? { 'Content-Type': o.contentType } : {}),
          ...(o.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(o.body)) } : {}),
          ...(o.accept ? { Accept: o.accept } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

