/**
 * The shared integration-test harness: a private containerd plus an in-process registry serving
 * the lab images, torn down completely by `stop()`.
 *
 *   const rt = await startTestRuntime({ name: 'cri', bridge: { name: 'nlb0', subnet: '10.232.0.0/24' } });
 *   t.after(() => rt.stop());
 *   // rt.endpoint, rt.images.busybox, …
 *
 * Every test process gets its own temp dir (config, root, state, socket, CNI conf, IPAM data);
 * the lab images are built once into build/images and shared (see ensureLabImages).
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_LAB_IMAGE_DIR, ensureLabImages, LAB_IMAGES, type Registry, startRegistry } from '@nodelet/oci';
import { containerdPaths, runningPid, startContainerd, stopContainerd, writeContainerdFiles } from '../containerd.js';
import { renderBridgeConflist } from '../containerd-config.js';
import { findProcesses, parentPid, run } from '../procs.js';
import { sweepRuntime } from '../sweep.js';

/** Tests remove their temp dirs after unmounting what is left under them (pod volumes). */
export { unmountUnder } from '../sweep.js';

export interface TestRuntime {
  /** `unix:///tmp/…/containerd.sock` */
  endpoint: string;
  /** `127.0.0.1:<port>` of the in-process registry serving the lab images. */
  registryHost: string;
  /** Full references, e.g. `127.0.0.1:41234/busybox:latest`. */
  images: { pause: string; busybox: string };
  cniBinDir: string;
  cniConfDir: string;
  /** containerd root and state directories. */
  rootDir: string;
  stateDir: string;
  /** containerd's PID. */
  pid: number;
  /** The temp directory holding everything of this runtime. */
  dir: string;
  /** containerd's log; removed by stop() unless NODELET_TEST_KEEP_LOGS=1 (then copied, path printed). */
  logFile: string;
  /**
   * Stops containerd (SIGTERM, then SIGKILL), removes leftover containers and shims, unmounts
   * and removes the temp dir, stops the registry, deletes the default bridge. Idempotent.
   */
  stop(): Promise<void>;
}

export interface StartTestRuntimeOptions {
  /** Used in temp dir and network names. */
  name: string;
  /** Use these CNI dirs (e.g. a nodelet-cni setup); the caller owns what they create. */
  cni?: { binDir: string; confDir: string };
  /** Without `cni`: a bridge + host-local conflist on this bridge and subnet (yours alone). */
  bridge?: { name: string; subnet: string };
  signal?: AbortSignal;
}

const DEFAULT_CNI_BIN_DIR = '/usr/lib/cni';

export async function startTestRuntime(opts: StartTestRuntimeOptions): Promise<TestRuntime> {
  if (!opts.cni && !opts.bridge) throw new Error('startTestRuntime: give either `cni` dirs or a `bridge` { name, subnet } of your own');
  if (opts.bridge && !/^[A-Za-z0-9_.-]{1,15}$/.test(opts.bridge.name)) {
    throw new Error(`startTestRuntime: bridge name "${opts.bridge.name}" must be 1-15 characters of [A-Za-z0-9_.-] (a Linux interface name)`);
  }
  const slug = opts.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 24);
  await reapOrphans(join(tmpdir(), `nodelet-rt-${slug}-`));
  const dir = await mkdtemp(join(tmpdir(), `nodelet-rt-${slug}-`));
  const paths = containerdPaths(dir);
  const networkName = `nodelet-${slug}-${randomBytes(3).toString('hex')}`;
  let registry: Registry | undefined;
  let pid: number | undefined;
  let stopping: Promise<void> | undefined;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const errors: Error[] = [];
      // pid is unknown when start was aborted while containerd was coming up: find it by its config.
      await stopContainerd(paths, pid ?? (await runningPid(paths))).catch((e: Error) => errors.push(e));
      if (process.env.NODELET_TEST_KEEP_LOGS && existsSync(paths.logFile)) {
        const kept = `${dir}.containerd.log`;
        await copyFile(paths.logFile, kept).catch(() => {});
        process.stderr.write(`# test runtime "${opts.name}": containerd log kept at ${kept}\n`);
      }
      errors.push(...(await sweepRuntime({ dir, state: paths.state, socket: paths.socket, removeDir: true })));
      await registry?.close();
      if (!opts.cni && opts.bridge && existsSync(`/sys/class/net/${opts.bridge.name}`)) {
        const r = await run('ip', ['link', 'del', opts.bridge.name]);
        if (r.code !== 0) errors.push(new Error(`deleting bridge ${opts.bridge.name}: ${r.stderr.trim()}`));
      }
      if (errors.length) throw new AggregateError(errors, `test runtime "${opts.name}" cleanup failed: ${errors.map((e) => e.message).join('; ')}`);
    })();
    return stopping;
  };

  try {
    const images = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR, { signal: opts.signal });
    registry = await startRegistry({ root: images.dir, host: '127.0.0.1', port: 0, signal: opts.signal });
    const refs = {
      pause: `${registry.hostPort}/${LAB_IMAGES.pause.name}:${LAB_IMAGES.pause.tag}`,
      busybox: `${registry.hostPort}/${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`,
    };
    let cniBinDir = DEFAULT_CNI_BIN_DIR;
    let cniConfDir = join(dir, 'cni', 'net.d');
    if (opts.cni) {
      cniBinDir = opts.cni.binDir;
      cniConfDir = opts.cni.confDir;
    } else {
      await mkdir(cniConfDir, { recursive: true });
      const conflist = renderBridgeConflist({ networkName, bridge: opts.bridge!.name, subnet: opts.bridge!.subnet, ipamDataDir: join(dir, 'cni', 'ipam') });
      await writeFile(join(cniConfDir, '10-test.conflist'), conflist);
    }
    await writeContainerdFiles(paths, {
      sandboxImage: refs.pause,
      cniBinDir,
      cniConfDir,
      plainHttpRegistries: [registry.hostPort],
    });
    const running = await startContainerd(paths, { signal: opts.signal, readyTimeoutMs: 30_000 });
    pid = running.pid;
    return {
      endpoint: running.endpoint,
      registryHost: registry.hostPort,
      images: refs,
      cniBinDir,
      cniConfDir,
      rootDir: paths.root,
      stateDir: paths.state,
      pid,
      dir,
      logFile: paths.logFile,
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/**
 * A test process killed before its `t.after` ran leaves its containerd running, reparented to
 * PID 1. Before starting, stop and sweep such orphans of the same test name (only those: a
 * runtime whose test process is alive is someone's running test).
 */
async function reapOrphans(prefix: string): Promise<void> {
  const configOf = (argv: string[]): string => argv[argv.indexOf('--config') + 1] ?? '';
  const candidates = await findProcesses((argv) => /containerd$/.test(argv[0] ?? '') && configOf(argv).startsWith(prefix));
  for (const c of candidates) {
    if ((await parentPid(c.pid)) !== 1) continue;
    const dir = dirname(configOf(c.argv));
    const paths = containerdPaths(dir);
    await stopContainerd(paths, c.pid).catch(() => {});
    await sweepRuntime({ dir, state: paths.state, socket: paths.socket, removeDir: true });
    process.stderr.write(`# reaped orphaned test runtime ${dir} (containerd pid ${c.pid})\n`);
  }
}

/**
 * For integration tests: skips `t` with a visible reason and returns false unless we are root
 * and containerd and runc are installed. Usage: `if (!requireRoot(t)) return;`
 */
export function requireRoot(t: { skip(message?: string): void }): boolean {
  if (process.getuid?.() !== 0) {
    t.skip('needs root (starts containerd and creates network namespaces)');
    return false;
  }
  for (const bin of ['containerd', 'runc']) {
    if (!onPath(bin)) {
      t.skip(`needs ${bin} on PATH (apt-get install containerd runc)`);
      return false;
    }
  }
  return true;
}

function onPath(bin: string): boolean {
  return (process.env.PATH ?? '/usr/bin:/bin').split(delimiter).some((d) => d && existsSync(join(d, bin)));
}
