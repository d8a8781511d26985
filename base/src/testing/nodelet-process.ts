/**
 * `nodelet server` and `nodelet agent` as child processes of a test or a bench, on the test-process
 * kit (./test-process.ts): output in a log file, ready on the daemon's own "Server ready" /
 * "Agent started" line (so both run at `--log-level info` at least), stopped by PID.
 * `startNodeletProcess` is the general form under both: any subcommand, the caller's flags as
 * given (a bench keeps its quieter log level) and the caller's readiness check.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { firstRecord, startTestProcess, type TestProcess, type TestProcessOptions } from './test-process.js';
import type { AfterHookHost } from './cleanups.js';

/** The repository's root (bin/, build/). */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** What `nodelet server` says in its "Server ready" line. */
export interface ServerReady {
  url: string;
  kubeconfig: string;
  /** holderIdentity of this server in the leader Leases. */
  leaderIdentity: string;
}

export type ServerProcess = TestProcess<ServerReady> & ServerReady;

export interface NodeletProcessOptions {
  /** Flags after the kit's own (see each starter). */
  args?: readonly string[];
  /** Run the built dist (`node bin/nodelet`) instead of the sources (what `bin/nodelet-dev` runs). */
  dist?: boolean;
  /** The checkout whose nodelet runs (a baseline build beside this one); default this repository. */
  root?: string;
  /** Node's own flags, before the script (`--cpu-prof`, `--expose-gc`, a preload's `--import`). */
  nodeArgs?: readonly string[];
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  logFile?: string;
  /** Default 60 s. */
  readyTimeoutMs?: number;
  /** SIGTERM to SIGKILL in stop(); default 10 s. */
  graceMs?: number;
  /** Registers stop() with `cleanups(t)`. */
  t?: AfterHookHost;
  signal?: AbortSignal;
  /** An IPC channel to the process (see `TestProcessOptions.ipc`). */
  ipc?: (message: unknown) => void;
}

export interface ServerProcessOptions extends NodeletProcessOptions {
  dataDir: string;
  /** Default 127.0.0.1. */
  bindAddress?: string;
  /** Default 0 (the kernel picks; `url` says which). */
  port?: number;
  /** `--datastore-endpoint` (etcd); SQLite in the data dir without it. */
  datastore?: string;
}

/**
 * Starts `nodelet server --data-dir … --bind-address … --port … --registry-address ''` with
 * `args`, and resolves on its "Server ready" line. The caller removes the data dir.
 */
export async function startServerProcess(o: ServerProcessOptions): Promise<ServerProcess> {
  const args = [
    'server', '--data-dir', o.dataDir, '--bind-address', o.bindAddress ?? '127.0.0.1', '--port', String(o.port ?? 0), '--registry-address', '',
    ...(o.datastore ? ['--datastore-endpoint', o.datastore] : []),
    ...withInfoLogs(o.args ?? []),
  ];
  const p = await startNodeletProcess({
    ...o,
    name: 'nodelet server',
    args,
    ready: (p) => {
      const r = firstRecord(p, 'Server ready');
      return r && { url: String(r.url), kubeconfig: String(r.kubeconfig), leaderIdentity: String(r.leaderIdentity) };
    },
  });
  return { ...p, ...p.ready };
}

/** Starts `nodelet agent` with `args` (from `agent` on) and resolves on its "Agent started" line. */
export function startAgentProcess(o: NodeletProcessOptions & { args: readonly string[] }): Promise<TestProcess<Record<string, unknown>>> {
  return startNodeletProcess({ ...o, name: 'nodelet agent', args: withInfoLogs(o.args), ready: (p) => firstRecord(p, 'Agent started') });
}

/**
 * Starts `nodelet <args>` exactly as given and resolves once `ready` does (see startTestProcess).
 * Node is spawned directly, as bin/nodelet-dev would exec it for the sources, so the PID is the
 * daemon's own (for /proc samples) and `nodeArgs` reach it.
 */
export function startNodeletProcess<T>(o: NodeletProcessOptions & { name: string; args: readonly string[]; ready: TestProcessOptions<T>['ready'] }): Promise<TestProcess<T>> {
  const root = o.root ?? REPO_ROOT;
  const source = o.dist ? [] : ['--conditions=source', '--import', pathToFileURL(join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href];
  return startTestProcess({
    name: o.name,
    command: process.execPath,
    args: [...(o.nodeArgs ?? []), ...source, join(root, 'bin', 'nodelet'), ...o.args],
    cwd: root,
    ready: o.ready,
    ...(o.env ? { env: { ...process.env, ...o.env } } : {}),
    ...(o.logFile ? { logFile: o.logFile } : {}),
    ...(o.readyTimeoutMs ? { readyTimeoutMs: o.readyTimeoutMs } : {}),
    ...(o.graceMs ? { graceMs: o.graceMs } : {}),
    ...(o.t ? { t: o.t } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.ipc ? { ipc: o.ipc } : {}),
  });
}

const QUIET = new Set(['warn', 'error', 'fatal', 'silent']);

/**
 * `args` with `--log-level` at info when it was quieter or absent: readiness is the daemon's info
 * line, and a test reading its log wants the lifecycle lines too.
 */
function withInfoLogs(args: readonly string[]): string[] {
  const out = [...args];
  const i = out.findIndex((a) => a === '--log-level' || a.startsWith('--log-level='));
  if (i < 0) return [...out, '--log-level', 'info'];
  const value = out[i] === '--log-level' ? out[i + 1] : out[i]!.slice('--log-level='.length);
  if (value !== undefined && QUIET.has(value)) out.splice(i, out[i] === '--log-level' ? 2 : 1, '--log-level', 'info');
  return out;
}

/**
 * Gives the server of `toDataDir` the cluster secrets of the one in `fromDataDir`, as
 * `nodelet install server --join` does (docs/ha.md): the CA (`pki/ca.crt`, `ca.key`) and the
 * service-account signing key (`pki/sa.key`). Nothing else: each server makes its own serving and
 * client certificates, for its own addresses, from that CA.
 */
export async function copyClusterSecrets(fromDataDir: string, toDataDir: string): Promise<void> {
  await mkdir(join(toDataDir, 'pki'), { recursive: true, mode: 0o700 });
  for (const f of ['ca.crt', 'ca.key', 'sa.key']) await copyFile(join(fromDataDir, 'pki', f), join(toDataDir, 'pki', f));
}
