/**
 * A private containerd for a lab node or a test: its own config, root, state and sockets in one
 * directory, started as a child process and stopped by PID.
 *
 *   writeContainerdFiles ─▶ startContainerd ─(poll CRI Version)─▶ ready ─▶ stopContainerd ─▶ sweepRuntime
 *
 * Used by `nodelet runtime up|down|status` and by `@nodelet/lab-runtime/testing`.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, delay } from '@nodelet/base';
import { type ContainerdConfigOptions, MIRRORED_REGISTRIES, renderContainerdConfig, renderHostsToml, renderMirrorHostsToml } from './containerd-config.js';
import { type CriVersion, probeCri } from './cri-probe.js';
import { crunForLab } from './crun.js';
import { connect as netConnect } from 'node:net';
import { findProcesses, isAlive, processArgv, terminate } from './procs.js';
import { logTail, managedPid, startManaged, type ManagedProcess } from './managed-process.js';

export interface ContainerdPaths {
  dir: string;
  root: string;
  state: string;
  /** gRPC socket path (endpoint is `unix://` + socket). */
  socket: string;
  configPath: string;
  certsDir: string;
  logFile: string;
  pidFile: string;
}

export function containerdPaths(dir: string): ContainerdPaths {
  return {
    dir,
    root: join(dir, 'root'),
    state: join(dir, 'state'),
    socket: join(dir, 'containerd.sock'),
    configPath: join(dir, 'config.toml'),
    certsDir: join(dir, 'certs.d'),
    logFile: join(dir, 'containerd.log'),
    pidFile: join(dir, 'containerd.pid'),
  };
}

export interface ContainerdFilesOptions {
  sandboxImage: string;
  cniBinDir: string;
  cniConfDir: string;
  /** `host:port` of every plain-HTTP registry to write a hosts.toml for. */
  plainHttpRegistries: string[];
  /** `host:port` of the plain-HTTP registry that mirrors MIRRORED_REGISTRIES (the lab registry); none when unset. */
  mirror?: string;
  /**
   * Other `host:port` names of the registry `mirror` (manifests and docs say `127.0.0.1:5000/…`,
   * but with a node network the registry listens on the node network's address): their pulls go
   * to `mirror` first, on every node, whatever its network namespace.
   */
  mirrorAliases?: string[];
  systemdCgroup?: boolean;
  /** crun for a `crun` runtime handler; default: crunForLab (crun when installed), `''` for none. */
  crunBinary?: string;
}

/** Writes config.toml and certs.d/<host>/hosts.toml. Idempotent. */
export async function writeContainerdFiles(p: ContainerdPaths, o: ContainerdFilesOptions): Promise<void> {
  await mkdir(p.root, { recursive: true, mode: 0o711 });
  await mkdir(p.state, { recursive: true, mode: 0o711 });
  const cfg: ContainerdConfigOptions = {
    root: p.root,
    state: p.state,
    socket: p.socket,
    sandboxImage: o.sandboxImage,
    cniBinDir: o.cniBinDir,
    cniConfDir: o.cniConfDir,
    certsDir: p.certsDir,
    systemdCgroup: o.systemdCgroup ?? false,
  };
  const crun = o.crunBinary ?? (await crunForLab(p.dir)) ?? '';
  if (crun) cfg.crunBinary = crun;
  await writeFile(p.configPath, renderContainerdConfig(cfg));
  for (const host of o.plainHttpRegistries) {
    await mkdir(join(p.certsDir, host), { recursive: true });
    await writeFile(join(p.certsDir, host, 'hosts.toml'), renderHostsToml(host));
  }
  if (o.mirror) {
    await writeMirrorHosts(p.certsDir, o.mirror);
    await writeAliasHosts(p.certsDir, o.mirror, o.mirrorAliases ?? []);
  }
}

/**
 * Writes `<certsDir>/<alias>/hosts.toml` for every alias of the registry `mirror` (but `mirror`
 * itself), sending its pulls to `mirror` first and to the alias's own plain-HTTP server only when
 * that fails. The image keeps the name it was asked by (`127.0.0.1:5000/busybox:latest`).
 */
export async function writeAliasHosts(certsDir: string, mirror: string, aliases: string[]): Promise<void> {
  for (const alias of aliases) {
    if (alias === mirror) continue;
    await mkdir(join(certsDir, alias), { recursive: true });
    await writeFile(join(certsDir, alias, 'hosts.toml'), renderMirrorHostsToml(alias, mirror, `http://${alias}`));
  }
}

/**
 * Writes `<certsDir>/<upstream>/hosts.toml` for every MIRRORED_REGISTRIES entry, sending its pulls
 * to `mirror` first. `upstreamServer` replaces the upstreams' own servers (tests point it at a
 * closed loopback port so a pull the mirror cannot answer never leaves the machine).
 */
export async function writeMirrorHosts(certsDir: string, mirror: string, upstreamServer?: string): Promise<void> {
  for (const upstream of MIRRORED_REGISTRIES) {
    await mkdir(join(certsDir, upstream), { recursive: true });
    await writeFile(join(certsDir, upstream, 'hosts.toml'), renderMirrorHostsToml(upstream, mirror, upstreamServer));
  }
}

export interface StartContainerdOptions {
  /** Wait this long for CRI to answer; default 30 s. */
  readyTimeoutMs?: number;
  /** Let containerd outlive this process (`nodelet runtime up`). Default false. */
  background?: boolean;
  /** containerd binary; default `containerd` on PATH. */
  binary?: string;
  /**
   * Run containerd (and so its shims and the CNI plugins it runs) in this network namespace, a
   * name under /run/netns (`ip netns add`): a lab node that is a machine of its own. Only the
   * network namespace changes (`nsenter --net`), so mounts and cgroups stay the host's.
   */
  netns?: string;
  signal?: AbortSignal;
}

export interface RunningContainerd {
  pid: number;
  endpoint: string;
  version: CriVersion;
}

/**
 * Starts containerd with `p.configPath` and resolves once CRI answers Version. On any failure
 * (exit, timeout, abort) the process is stopped before rejecting; the error carries the log tail.
 */
export async function startContainerd(p: ContainerdPaths, opts: StartContainerdOptions = {}): Promise<RunningContainerd> {
  opts.signal?.throwIfAborted();
  await assertPrivateConfig(p);
  if (await socketAnswers(p.socket)) {
    throw new AgentError('ERR_ALREADY_EXISTS', `something already serves "${p.socket}" (a containerd without our pidfile?): stop it first, e.g. \`nodelet runtime down --dir ${p.dir}\``);
  }
  await rm(p.socket, { force: true });
  const proc = managedOf(p);
  // nsenter execs containerd in place: the PID recorded is containerd's.
  const argv = [...(opts.netns ? ['nsenter', `--net=/run/netns/${opts.netns}`] : []), opts.binary ?? 'containerd', '--config', p.configPath];
  const started = await startManaged(proc, argv[0]!, argv.slice(1), { keepRunning: opts.background, installHint: `apt-get install ${opts.netns ? 'util-linux' : 'containerd'}` });
  const pid = started.pid;

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  let last: unknown;
  try {
    for (let wait = 20; ; wait = Math.min(wait * 2, 200)) {
      opts.signal?.throwIfAborted();
      const exited = started.exited();
      if (exited) {
        throw new AgentError('ERR_UNAVAILABLE', `containerd exited (${exited.code ?? exited.signal}) before CRI was ready; log ${p.logFile}:\n${await logTail(p.logFile, 15)}`);
      }
      try {
        const version = await probeCri(p.socket, { signal: opts.signal, timeoutMs: 2_000 });
        return { pid, endpoint: `unix://${p.socket}`, version };
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        last = err;
      }
      if (Date.now() >= deadline) {
        throw new AgentError('ERR_DEADLINE_EXCEEDED', `containerd CRI did not become ready within ${opts.readyTimeoutMs ?? 30_000} ms (last: ${(last as Error)?.message}); log ${p.logFile}:\n${await logTail(p.logFile, 15)}`);
      }
      await delay(wait, opts.signal);
    }
  } catch (err) {
    await terminate(pid, 5_000).catch(() => {}); // the start failure is rethrown below; termination is best effort
    await rm(p.pidFile, { force: true });
    throw err;
  }
}

/**
 * The PID of the containerd running with this config: the pidfile's when it is that process,
 * else found by its `--config <ours>` argument (a lost or stale pidfile must not hide it).
 */
export async function runningPid(p: ContainerdPaths): Promise<number | undefined> {
  const pid = await managedPid(managedOf(p), (argv) => argv.includes(p.configPath));
  if (pid !== undefined) return pid;
  const found = await findProcesses((argv) => /containerd$/.test(argv[0] ?? '') && argv[argv.indexOf('--config') + 1] === p.configPath);
  return found[0]?.pid;
}

/**
 * Refuses configs that would make containerd fall back to the host-wide defaults
 * (/var/lib/containerd, /run/containerd, /run/containerd/containerd.sock) and so share state with
 * the distro's or another engineer's instance. Our renderer always sets all three.
 */
async function assertPrivateConfig(p: ContainerdPaths): Promise<void> {
  const text = await readFile(p.configPath, 'utf8').catch((err: Error) => {
    throw new AgentError('ERR_FAILED_PRECONDITION', `cannot read containerd config "${p.configPath}": ${err.message}`, { cause: err });
  });
  const want = [`root = ${JSON.stringify(p.root)}`, `state = ${JSON.stringify(p.state)}`, `address = ${JSON.stringify(p.socket)}`];
  const missing = want.filter((line) => !text.split('\n').some((l) => l.trim() === line));
  if (missing.length) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `containerd config "${p.configPath}" lacks ${missing.join(', ')}: refusing to start a containerd that would share host-wide state (write it with writeContainerdFiles)`);
  }
}

/** True when a process accepts connections on the unix socket `path`. */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** True when `pid` is alive and its argv names our config (a reused PID is not ours). */
export async function isOurs(pid: number, p: ContainerdPaths): Promise<boolean> {
  const argv = await processArgv(pid);
  return !!argv && (await isAlive(pid)) && argv.includes(p.configPath);
}

/** SIGTERM (then SIGKILL after `graceMs`, default 10 s) the containerd of `pid`; removes the pidfile. */
export async function stopContainerd(p: ContainerdPaths, pid: number | undefined, graceMs = 10_000): Promise<void> {
  if (pid !== undefined && (await isOurs(pid, p))) await terminate(pid, graceMs);
  // containerd removes its gRPC socket on a clean exit but not the ttrpc one, nor either after SIGKILL.
  for (const f of [p.pidFile, p.socket, p.socket + '.ttrpc']) await rm(f, { force: true });
}

/** The pidfile and log of this containerd, as the lab's other processes keep theirs. */
function managedOf(p: ContainerdPaths): ManagedProcess {
  return { name: 'containerd', pidFile: p.pidFile, logFile: p.logFile };
}
