import { chmod, copyFile, lstat, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@nodelet/base';

/** The shim as a dependency-free ES module run by node (the fallback). */
export const NODELET_CNI_SCRIPT = fileURLToPath(new URL('../../shim/nodelet-cni.mjs', import.meta.url));
/** The shim compiled from cni/shim/nodelet-cni.c by cni/build.mk (`make native`). */
export const NODELET_CNI_BINARY = fileURLToPath(new URL('../../../build/nodelet-cni', import.meta.url));
export const DEFAULT_SOCKET_PATH = '/run/nodelet/cni.sock';
export const RUNTIME_NETWORK_NAME = 'nodelet';

async function atomicWrite(file: string, data: string | Buffer, mode: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, data, { mode });
  await chmod(tmp, mode);
  await rename(tmp, file);
}

export interface RuntimeConflistOptions {
  /** The runtime's CNI conf_dir (containerd `conf_dir`, e.g. /etc/cni/net.d). */
  confDir: string;
  /** Where the CNI service listens; written into the plugin config for nodelet-cni. */
  socketPath: string;
  /** Network name the runtime sees. Default "nodelet". */
  name?: string;
  /** Default "10-nodelet.conflist" (sorts before most distro defaults). */
  fileName?: string;
  /** containerd 1.6's libcni speaks up to 1.0.0. */
  cniVersion?: string;
}

/**
 * Writes the conflist the container runtime loads: one plugin, nodelet-cni, declaring the
 * capabilities the runtime should pass as runtimeConfig (containerd only sends capability args
 * to plugins that declare them). Atomic, so the runtime never reads half a file. Returns its path.
 */
export async function writeRuntimeConflist(opts: RuntimeConflistOptions): Promise<string> {
  const file = join(opts.confDir, opts.fileName ?? `10-${opts.name ?? RUNTIME_NETWORK_NAME}.conflist`);
  const doc = {
    cniVersion: opts.cniVersion ?? '1.0.0',
    name: opts.name ?? RUNTIME_NETWORK_NAME,
    plugins: [
      {
        type: 'nodelet-cni',
        socketPath: opts.socketPath,
        capabilities: { portMappings: true, bandwidth: true, dns: true, ipRanges: true, mac: true },
      },
    ],
  };
  await atomicWrite(file, `${JSON.stringify(doc, null, 2)}\n`, 0o644);
  return file;
}

export interface InstallOptions {
  /** Directories to take `loopback` from (containerd runs its own loopback network). */
  pluginDirs?: readonly string[];
  /**
   * Which build to install: a compiled binary (path), 'script' for the node version, or 'auto'
   * (default): $NODELET_CNI_BINARY or build/nodelet-cni when present, else the script.
   */
  shim?: 'auto' | 'script' | { binary: string };
  /** The node binary the script version runs with; default this process's. */
  nodePath?: string;
}

async function pickBinary(shim: InstallOptions['shim']): Promise<string | undefined> {
  if (shim === 'script') return undefined;
  if (typeof shim === 'object') return shim.binary;
  for (const p of [process.env.NODELET_CNI_BINARY, NODELET_CNI_BINARY]) {
    if (p && (await lstat(p).then((s) => s.isFile(), () => false))) return p;
  }
  return undefined;
}

/**
 * Installs nodelet-cni into the runtime's CNI bin_dir (with an absolute node path in its
 * shebang, since runtimes exec plugins with a minimal PATH) and links `loopback` beside it.
 * Idempotent; writes atomically so a runtime exec never sees a half-written file.
 */
export async function installNodeletCni(binDir: string, opts: InstallOptions = {}): Promise<{ nodeletCni: string; kind: 'binary' | 'script'; loopback?: string }> {
  const target = join(binDir, 'nodelet-cni');
  const binary = await pickBinary(opts.shim);
  if (binary) {
    await atomicWrite(target, await readFile(binary), 0o755);
  } else {
    const body = (await readFile(NODELET_CNI_SCRIPT, 'utf8')).replace(/^#!.*\n/, '');
    await atomicWrite(target, `#!${opts.nodePath ?? process.execPath}\n${body}`, 0o755);
  }
  const out: { nodeletCni: string; kind: 'binary' | 'script'; loopback?: string } = { nodeletCni: target, kind: binary ? 'binary' : 'script' };
  const loopback = join(binDir, 'loopback');
  const exists = await lstat(loopback).then(() => true, () => false);
  if (exists) {
    out.loopback = loopback;
    return out;
  }
  const dirs = opts.pluginDirs ?? ['/usr/lib/cni', '/opt/cni/bin'];
  for (const dir of dirs) {
    const from = join(dir, 'loopback');
    if (from === loopback || !(await lstat(from).then(() => true, () => false))) continue;
    try {
      await symlink(from, loopback);
    } catch {
      await copyFile(from, loopback);
      await chmod(loopback, 0o755);
    }
    out.loopback = loopback;
    return out;
  }
  throw new AgentError('ERR_FAILED_PRECONDITION', `no "loopback" plugin in [${dirs.join(', ')}] to install into "${binDir}": install containernetworking-plugins`);
}

/** Removes what installNodeletCni and writeRuntimeConflist wrote (tests, `nodelet uninstall`). */
export async function removeRuntimeFiles(paths: string[]): Promise<void> {
  for (const p of paths) await rm(p, { force: true });
}
