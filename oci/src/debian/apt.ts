/**
 * Debian packages for image builds, through this machine's apt (its configured mirror and package
 * lists): which packages a set needs (`apt-get --simulate` against an empty dpkg status, so apt's
 * own resolver picks among alternatives and nothing installed here is assumed), the .deb files in a
 * cache directory (reused from apt's own cache, else `apt-get download`), and their contents
 * unpacked from `dpkg-deb --fsys-tarfile` (one pass gives the files and their owners). No maintainer script runs: recipes.ts does what the few that matter
 * would have done. Once the .debs are cached a build needs no network.
 *
 *   names ──apt-get -s (empty status)──▶ [name=version arch] ──cache | apt cache | apt-get download──▶ .deb ──dpkg-deb --fsys-tarfile──▶ tar -x ▶ root, owners
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, copyFile, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { AgentError } from '@nodelet/base';
import type { PathOwner } from '../rootfs-tree.js';
import { runTool } from '../exec.js';

export interface DebianPackage {
  name: string;
  version: string;
  /** `amd64`, `all`, … */
  arch: string;
}

/** Where apt keeps the .debs it downloaded for this machine; read, never written. */
const APT_ARCHIVES = '/var/cache/apt/archives';

/** A package name as Debian policy allows it (lower case, digits, `+ - .`), optionally `:arch`. */
const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+(?::[a-z0-9-]+)?$/;

/** Refuses anything that is not a Debian package name (the names end up as apt arguments). */
export function validatePackageName(name: string): string {
  if (!PACKAGE_NAME.test(name)) throw new AgentError('ERR_INVALID_ARGUMENT', `"${name}" is not a Debian package name (lower-case letters, digits, "+", "-", ".")`);
  return name;
}

/**
 * The packages to unpack for `names` and everything they depend on (Depends and Pre-Depends, no
 * Recommends), with the versions this machine's package lists offer, in apt's install order.
 */
export async function resolvePackages(names: readonly string[], signal?: AbortSignal): Promise<DebianPackage[]> {
  if (names.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', 'no Debian packages given');
  for (const n of names) validatePackageName(n);
  let out: string;
  try {
    out = await runTool('apt-get', ['--simulate', '-o', 'Dir::State::status=/dev/null', '-o', 'Debug::NoLocking=1', '--no-install-recommends', 'install', ...names], { signal });
  } catch (err) {
    const msg = (err as Error).message;
    const missing = /Unable to locate package (\S+)/.exec(msg)?.[1] ?? /Package '?(\S+?)'? has no installation candidate/.exec(msg)?.[1];
    if (missing) throw new AgentError('ERR_NOT_FOUND', `Debian package "${missing}" is not in this machine's package lists (apt-get update, or check the name)`, { cause: err });
    throw err;
  }
  const pkgs: DebianPackage[] = [];
  for (const line of out.split('\n')) {
    // "Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64])"
    const m = /^Inst (\S+) (?:\[[^\]]*\] )?\((\S+) .*\[([a-z0-9-]+)\]\)/.exec(line);
    if (m) pkgs.push({ name: m[1]!.replace(/:[a-z0-9-]+$/, ''), version: m[2]!, arch: m[3]! });
  }
  if (pkgs.length === 0) throw new AgentError('ERR_INTERNAL', `apt-get resolved no packages for ${names.join(', ')}: ${out.trim().slice(-500)}`);
  return pkgs;
}

/** The file name apt gives a package's .deb (`busybox_1%3a1.35.0-4_amd64.deb`: the epoch colon escaped). */
export function debFileName(p: DebianPackage): string {
  return `${p.name}_${p.version.replaceAll(':', '%3a')}_${p.arch}.deb`;
}

/**
 * The .deb of each package in `cacheDir`: already there, copied from apt's cache, or downloaded
 * with `apt-get download` (into a private temp directory, then renamed in, so concurrent builds
 * sharing the cache never see half a file).
 */
export async function fetchDebs(pkgs: readonly DebianPackage[], cacheDir: string, signal?: AbortSignal): Promise<string[]> {
  await mkdir(cacheDir, { recursive: true });
  const missing: DebianPackage[] = [];
  for (const p of pkgs) {
    const dest = join(cacheDir, debFileName(p));
    if (await exists(dest)) continue;
    if (await exists(join(APT_ARCHIVES, debFileName(p)))) {
      const tmp = `${dest}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      await copyFile(join(APT_ARCHIVES, debFileName(p)), tmp);
      await rename(tmp, dest);
    } else {
      missing.push(p);
    }
  }
  if (missing.length) {
    const tmp = await mkdtemp(join(cacheDir, '.download-'));
    try {
      // Sandbox user root: the _apt user may not write into the cache directory.
      await runTool('apt-get', ['download', '-o', 'APT::Sandbox::User=root', ...missing.map((p) => (p.arch === 'all' ? `${p.name}=${p.version}` : `${p.name}:${p.arch}=${p.version}`))], { cwd: tmp, signal }).catch((err: Error) => {
        throw new AgentError('ERR_UNAVAILABLE', `downloading ${missing.length} Debian package(s) failed (they are not cached in "${cacheDir}" or ${APT_ARCHIVES}, and the apt mirror did not answer): ${err.message}`, { cause: err });
      });
      const got = new Set(await readdir(tmp));
      for (const p of missing) {
        const name = debFileName(p);
        if (!got.has(name)) throw new AgentError('ERR_INTERNAL', `apt-get download did not produce ${name}`);
        await rename(join(tmp, name), join(cacheDir, name));
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  return pkgs.map((p) => join(cacheDir, debFileName(p)));
}

/**
 * Unpacks each .deb's files into `root` in order (a later package's file replaces an earlier
 * one's), as `dpkg-deb -x` does, and returns what `readDebOwners` reads from the same stream: each
 * package is decompressed once.
 */
export async function unpackDebs(debs: readonly string[], root: string, signal?: AbortSignal): Promise<PathOwner[]> {
  const owners: PathOwner[] = [];
  for (const deb of debs) owners.push(...(await readDebOwners(deb, signal, root)));
  return owners;
}

/**
 * The entries of a .deb that need an owner or mode of their own in an image: owned by someone
 * other than root (`root:shadow` for `chage`, `root:staff` for `/var/local`) or with setuid,
 * setgid or sticky bits. Read from the package's own tar headers (numeric ids, as the package was
 * built), so the image depends neither on this machine's users nor on building as root. With
 * `extractTo`, the files are unpacked there from the same stream (owned by the builder).
 */
export async function readDebOwners(deb: string, signal?: AbortSignal, extractTo?: string): Promise<PathOwner[]> {
  const owners: PathOwner[] = [];
  const dpkg = spawnTool('dpkg-deb', ['--fsys-tarfile', deb], 'ignore', signal);
  const parser = new Parser({
    onReadEntry: (e: ReadEntry) => {
      const mode = e.mode ?? 0;
      const uid = e.uid ?? 0;
      const gid = e.gid ?? 0;
      const path = e.path.replace(/^\.?\/+/, '/').replace(/(.)\/+$/, '$1');
      if (path !== '/' && e.type !== 'SymbolicLink' && (uid !== 0 || gid !== 0 || (mode & 0o7000) !== 0)) owners.push({ path, uid, gid, mode: mode & 0o7777 });
      e.resume();
    },
  });
  const tar = extractTo ? spawnTool('tar', ['-x', '--no-same-owner', '-p', '-C', extractTo, '-f', '-'], 'pipe', signal) : undefined;
  if (tar) dpkg.child.stdout!.pipe(tar.child.stdin!);
  const parsed = pipeline(dpkg.child.stdout!, parser);
  await Promise.all([parsed, dpkg.done, tar?.done]);
  return owners;
}

/** A child whose `done` rejects with the tail of its stderr when it exits non-zero. */
function spawnTool(cmd: string, args: string[], stdin: 'ignore' | 'pipe', signal?: AbortSignal): { child: ChildProcess; done: Promise<void> } {
  const child = spawn(cmd, args, { stdio: [stdin, 'pipe', 'pipe'], signal });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, sig) => {
      if (code === 0) resolve();
      else reject(new AgentError('ERR_INTERNAL', `${cmd} ${args.join(' ')} ${sig ? `was killed by ${sig}` : `exited with ${code}`}: ${stderr.trim() || '(no output)'}`));
    });
  });
  return { child, done };
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}
