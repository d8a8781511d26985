/**
 * The lab runtime of one node, behind `nodelet runtime up|down|status`: a private containerd
 * in a state dir (default the `make up` lab's, lab-layout.ts), started in the background and
 * found again through its pidfile.
 *
 *   <dir>/config.toml  certs.d/<registry>/hosts.toml  containerd.sock  containerd.pid
 *   <dir>/containerd.log  root/  state/
 *
 * `up` is idempotent (a running instance is reused), `down` stops it by the pidfile PID and
 * removes its containers, shims and mounts but keeps config, log and images for the next `up`.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { AgentError, delay } from '@nodelet/base';
import { LAB_IMAGES } from '@nodelet/oci';
import { containerdPaths, type ContainerdPaths, runningPid, startContainerd, stopContainerd, writeContainerdFiles } from './containerd.js';
import { type CriVersion, probeCri } from './cri-probe.js';
import { isAlive } from './procs.js';
import { sweepRuntime } from './sweep.js';
import { DEFAULT_LAB_RUNTIME_DIR, DEFAULT_REGISTRY } from './lab-layout.js';

/** The agent's defaults (agent/src/config): it installs nodelet-cni and writes its conflist there. */
export const DEFAULT_CNI_BIN_DIR = '/opt/cni/bin';
export const DEFAULT_CNI_CONF_DIR = '/etc/cni/net.d';

export interface LabRuntimeOptions {
  dir?: string;
  /** `host:port` of the plain-HTTP registry holding the pause image. */
  registry?: string;
  /** Default `<registry>/pause:3.9`. */
  sandboxImage?: string;
  cniBinDir?: string;
  cniConfDir?: string;
  systemdCgroup?: boolean;
  readyTimeoutMs?: number;
  /** Start containerd in this network namespace (see `StartContainerdOptions.netns`). */
  netns?: string;
  signal?: AbortSignal;
}

export interface LabRuntimeUp {
  alreadyRunning: boolean;
  pid: number;
  endpoint: string;
  version: CriVersion;
  paths: ContainerdPaths;
}

export function defaultSandboxImage(registry: string): string {
  return `${registry}/${LAB_IMAGES.pause.name}:${LAB_IMAGES.pause.tag}`;
}

/**
 * Writes the config and starts containerd unless ours already runs; resolves when CRI answers.
 * Concurrent `up`s of one dir are serialised by a lock file, so only one containerd starts.
 */
export async function labRuntimeUp(o: LabRuntimeOptions = {}): Promise<LabRuntimeUp> {
  const paths = containerdPaths(o.dir ?? DEFAULT_LAB_RUNTIME_DIR);
  await mkdir(paths.dir, { recursive: true, mode: 0o711 });
  return withLock(join(paths.dir, 'up.lock'), o.signal, () => upLocked(paths, o));
}

async function upLocked(paths: ContainerdPaths, o: LabRuntimeOptions): Promise<LabRuntimeUp> {
  const existing = await runningPid(paths);
  if (existing !== undefined) {
    const version = await waitCri(paths, o);
    return { alreadyRunning: true, pid: existing, endpoint: `unix://${paths.socket}`, version, paths };
  }
  const registry = o.registry ?? DEFAULT_REGISTRY;
  await writeContainerdFiles(paths, {
    sandboxImage: o.sandboxImage ?? defaultSandboxImage(registry),
    cniBinDir: o.cniBinDir ?? DEFAULT_CNI_BIN_DIR,
    cniConfDir: o.cniConfDir ?? DEFAULT_CNI_CONF_DIR,
    plainHttpRegistries: [registry],
    mirror: registry,
    // A lab on a node network serves its registry elsewhere; `127.0.0.1:5000/…` still pulls.
    mirrorAliases: [DEFAULT_REGISTRY],
    systemdCgroup: o.systemdCgroup ?? false,
  });
  const running = await startContainerd(paths, { background: true, readyTimeoutMs: o.readyTimeoutMs, signal: o.signal, ...(o.netns ? { netns: o.netns } : {}) });
  return { alreadyRunning: false, pid: running.pid, endpoint: running.endpoint, version: running.version, paths };
}

async function waitCri(paths: ContainerdPaths, o: LabRuntimeOptions): Promise<CriVersion> {
  const deadline = Date.now() + (o.readyTimeoutMs ?? 30_000);
  for (;;) {
    try {
      return await probeCri(paths.socket, { signal: o.signal });
    } catch (err) {
      if (o.signal?.aborted || Date.now() >= deadline) throw err;
      await delay(100, o.signal);
    }
  }
}

export interface LabRuntimeDown {
  wasRunning: boolean;
  pid?: number;
  /** Cleanup problems (each names what failed); empty when everything was removed. */
  problems: string[];
}

/** Stops our containerd and removes what its containers left. Idempotent. */
export async function labRuntimeDown(o: { dir?: string; graceMs?: number } = {}): Promise<LabRuntimeDown> {
  const paths = containerdPaths(o.dir ?? DEFAULT_LAB_RUNTIME_DIR);
  if (!existsSync(paths.dir)) return { wasRunning: false, problems: [] };
  const pid = await runningPid(paths);
  const problems: string[] = [];
  await stopContainerd(paths, pid, o.graceMs).catch((e: Error) => problems.push(e.message));
  const errs = await sweepRuntime({ dir: paths.dir, state: paths.state, socket: paths.socket, removeDir: false });
  problems.push(...errs.map((e) => e.message));
  return { wasRunning: pid !== undefined, ...(pid !== undefined ? { pid } : {}), problems };
}

export interface LabRuntimeStatus {
  running: boolean;
  pid?: number;
  endpoint: string;
  criReady: boolean;
  version?: CriVersion;
  /** Why CRI is not ready, when running. */
  error?: string;
  configPath: string;
  logFile: string;
}

export async function labRuntimeStatus(o: { dir?: string; signal?: AbortSignal } = {}): Promise<LabRuntimeStatus> {
  const paths = containerdPaths(o.dir ?? DEFAULT_LAB_RUNTIME_DIR);
  const base = { endpoint: `unix://${paths.socket}`, configPath: paths.configPath, logFile: paths.logFile };
  const pid = await runningPid(paths);
  if (pid === undefined) return { running: false, criReady: false, ...base };
  try {
    const version = await probeCri(paths.socket, { signal: o.signal });
    return { running: true, pid, criReady: true, version, ...base };
  } catch (err) {
    if (o.signal?.aborted) throw err;
    return { running: true, pid, criReady: false, error: (err as Error).message, ...base };
  }
}

/**
 * Runs `fn` holding an exclusive lock file (O_EXCL create holding our PID). A lock whose PID is
 * gone is stale (its holder crashed) and is taken over (best effort: good enough for one node).
 */
async function withLock<T>(path: string, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  for (let wait = 20; ; wait = Math.min(wait * 2, 250)) {
    signal?.throwIfAborted();
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (!holder || !(await isAlive(holder))) {
        await rm(path, { force: true });
        continue;
      }
      await delay(wait, signal);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
  }
}

/** Throws ERR_FAILED_PRECONDITION when not root: containerd needs it for mounts and namespaces. */
export function assertRoot(what: string): void {
  if (process.getuid?.() !== 0) throw new AgentError('ERR_FAILED_PRECONDITION', `${what} needs root (containerd mounts filesystems and creates namespaces): run it with sudo`);
}
