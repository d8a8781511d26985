import { chmod, copyFile, lstat, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@nodelet/base';

/** The shim's source (a dependency-free ES module run by node). */
export const NODELET_CNI_SOURCE = fileURLToPath(new URL('../../shim/nodelet-cni.mjs', import.meta.url));
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
  /** The node binary nodelet-cni runs with; default this process's. */
  nodePath?: string;
}

/**
 * Installs nodelet-cni into the runtime's CNI bin_dir (with an absolute node path in its
 * shebang, since runtimes exec plugins with a minimal PATH) and links `loopback` beside it.
 * Idempotent; writes atomically so a runtime exec never sees a half-written file.
 */
export async function installNodeletCni(binDir: string, opts: InstallOptions = {}): Promise<{ nodeletCni: string; loopback?: string }> {
  const src = await readFile(NODELET_CNI_SOURCE, 'utf8');
  const body = src.replace(/^#!.*\n/, '');
  const target = join(binDir, 'nodelet-cni');
  await atomicWrite(target, `#!${opts.nodePath ?? process.execPath}\n${body}`, 0o755);
  const out: { nodeletCni: string; loopback?: string } = { nodeletCni: target };
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
