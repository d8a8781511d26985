/**
 * `buildDebianImage`: an OCI image from Debian packages (`nodelet image build --debian nginx`).
 * The root is the packages' dependency closure plus a minimal base (base-files for the directory
 * skeleton and /etc/os-release, base-passwd for the system users, dash for /bin/sh), unpacked
 * without maintainer scripts; recipes.ts adds the config and the postinst steps that matter. The
 * layer is as deterministic as every buildImage layer: the same .debs give the same digest.
 *
 *   packages ──resolvePackages──▶ closure ──fetchDebs (cache)──▶ .debs ──unpackDebs──▶ root
 *            root + /etc/passwd, group (+ the recipe's system users), nsswitch.conf + recipe.prepare
 *            + owners (the .debs' own tar headers, then the recipe's chowns) ──buildImage──▶ store name:tag
 *
 * Ownership never comes from the unpacked files (dpkg-deb maps names through this machine's users,
 * and a build that is not root keeps none): it is read from each .deb's headers and the recipe.
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@nodelet/base';
import { buildImage, type BuiltImage } from '../build.js';
import type { PathOwner } from '../rootfs-tree.js';
import { fetchDebs, resolvePackages, unpackDebs, type DebianPackage } from './apt.js';
import { RECIPES, recipeFor, type RecipeConfig } from './recipes.js';
import { addSystemAccounts, lookupIds } from './users.js';

/** Where the .debs are kept between builds: `build/debs` of the checkout (this file is <root>/oci/{src,dist}/debian/). */
export const DEFAULT_DEB_CACHE = fileURLToPath(new URL('../../../build/debs', import.meta.url));

/** What every Debian-built image has under its packages. */
export const DEBIAN_BASE_PACKAGES = ['base-files', 'base-passwd', 'dash'] as const;

/** glibc looks users and hosts up through these (files first, then DNS for hosts, as Debian ships it). */
export const NSSWITCH_CONF = 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n';

export interface BuildDebianImageOptions {
  store: string;
  name: string;
  tag: string;
  /** Packages to install; the first with a recipe (recipes.ts) sets the config. */
  packages: string[];
  /**
   * Config given by the user (`--entrypoint`, …), over the recipe's. Without a recipe an
   * entrypoint or a command is required.
   */
  config?: RecipeConfig;
  /** Where the .debs are kept between builds. */
  cacheDir: string;
  signal?: AbortSignal;
  /** Told each step as it starts (a build takes up to a minute: the CLI prints them). */
  onProgress?: (step: string) => void;
}

export interface BuiltDebianImage extends BuiltImage {
  /** Every package unpacked into the image, in install order. */
  installed: DebianPackage[];
}

export async function buildDebianImage(opts: BuildDebianImageOptions): Promise<BuiltDebianImage> {
  const recipe = recipeFor(opts.packages);
  const given = opts.config ?? {};
  if (!recipe && !given.entrypoint && !given.cmd) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `no known entrypoint for Debian package${opts.packages.length > 1 ? 's' : ''} ${opts.packages.map((p) => `"${p}"`).join(', ')} (nodelet knows ${Object.keys(RECIPES).join(', ')}): give the command to run with --entrypoint or --cmd`);
  }
  const say = opts.onProgress ?? (() => {});
  say(`resolving the dependencies of ${opts.packages.join(', ')} with apt…`);
  const installed = await resolvePackages([...DEBIAN_BASE_PACKAGES, ...opts.packages], opts.signal);
  say(`fetching ${installed.length} .debs into ${opts.cacheDir} (those already there are reused)…`);
  const debs = await fetchDebs(installed, opts.cacheDir, opts.signal);
  say(`unpacking ${debs.length} packages…`);
  const root = await mkdtemp(join(tmpdir(), 'nodelet-debian-'));
  try {
    // A later package's entry replaces an earlier one's, as in the unpacked root; one whose path a later
    // package's symlink hides is not in the image (optional).
    const owners = new Map<string, PathOwner>();
    for (const o of await unpackDebs(debs, root, opts.signal)) owners.set(o.path, { ...o, optional: true });
    // base-passwd's postinst writes /etc/passwd and /etc/group from its master copies; the recipe's postinst adds its users.
    const accounts = addSystemAccounts(
      { passwd: await readFile(join(root, 'usr/share/base-passwd/passwd.master'), 'utf8'), group: await readFile(join(root, 'usr/share/base-passwd/group.master'), 'utf8') },
      recipe?.accounts ?? {},
    );
    await writeFile(join(root, 'etc/passwd'), accounts.passwd, { mode: 0o644 });
    await writeFile(join(root, 'etc/group'), accounts.group, { mode: 0o644 });
    await writeFile(join(root, 'etc/nsswitch.conf'), NSSWITCH_CONF, { mode: 0o644 });
    await baseFilesPostinst(root);
    const prepared = (await recipe?.prepare?.(root)) ?? {};
    for (const o of recipe?.owners ?? []) owners.set(o.path, { path: o.path, ...lookupIds(accounts, o.user, o.group), mode: o.mode });
    const c: RecipeConfig = { ...recipe?.config, ...prepared, ...given };
    if (given.entrypoint && !given.cmd) delete c.cmd; // as a Dockerfile ENTRYPOINT resets CMD
    if (given.env) c.env = mergeEnv(c.env ?? [], given.env);
    say(`writing the layer and the image ${opts.name}:${opts.tag}…`);
    const built = await buildImage({
      store: opts.store,
      name: opts.name,
      tag: opts.tag,
      dirs: [{ from: root, to: '/' }],
      owners: [...owners.values()],
      config: {
        ...c,
        labels: { 'org.nodelet.debian.packages': opts.packages.map((p) => `${p}=${installed.find((i) => i.name === p)?.version ?? '?'}`).join(',') },
      },
      signal: opts.signal,
    });
    return { ...built, installed };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * base-files' postinst: /run/lock (1777), and /var/run and /var/lock as links to /run and
 * /run/lock, so daemons that put sockets under /var/run (postgres) find /run. Anything a package
 * unpacked under them moves along, as the links replace the directories.
 */
async function baseFilesPostinst(root: string): Promise<void> {
  await mkdir(join(root, 'run/lock'), { recursive: true });
  await chmod(join(root, 'run/lock'), 0o1777);
  for (const [from, to] of [['var/run', 'run'], ['var/lock', 'run/lock']] as const) {
    const at = join(root, from);
    const st = await lstat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined; // not unpacked: only the link to make
      throw err;
    });
    if (st?.isSymbolicLink()) continue;
    if (st) {
      for (const name of await readdir(at)) await rename(join(at, name), join(root, to, name));
      await rmdir(at);
    }
    await symlink(`/${to}`, at);
  }
}

/**
 * Checks a `--from` base against what this machine's apt serves: `debian`, `debian:<codename>`
 * or `debian:<major version>` of the release in `osRelease` (/etc/os-release's text). Images are
 * built from this machine's package lists, so another release cannot be had.
 */
export function checkDebianBase(from: string, osRelease: string): void {
  const field = (k: string): string | undefined => new RegExp(`^${k}="?([^"\\n]*)"?$`, 'm').exec(osRelease)?.[1];
  const id = field('ID');
  const codename = field('VERSION_CODENAME');
  const version = field('VERSION_ID');
  const serves = id === 'debian' ? `debian:${codename ?? '?'} (Debian ${version ?? '?'})` : `${field('PRETTY_NAME') ?? id ?? 'an unknown system'}, not Debian`;
  const m = /^debian(?::([a-z0-9.]+))?$/.exec(from);
  if (!m) throw new AgentError('ERR_INVALID_ARGUMENT', `--from "${from}": want debian:<release> (images are built from Debian packages with this machine's apt, which serves ${serves})`);
  if (id !== 'debian') throw new AgentError('ERR_FAILED_PRECONDITION', `--from "${from}": this machine is ${serves}; its apt cannot give Debian packages`);
  const want = m[1];
  if (want !== undefined && want !== 'latest' && want !== codename && want !== version) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `--from "${from}": this machine's apt serves ${serves} only; build on such a machine, or use --from debian:${codename ?? '?'}`);
  }
}

/** `KEY=VALUE` lists merged by key, the later winning (`-e PATH=…` over the recipe's PATH). */
function mergeEnv(a: readonly string[], b: readonly string[]): string[] {
  const m = new Map<string, string>();
  for (const kv of [...a, ...b]) m.set(kv.split('=')[0]!, kv);
  return [...m.values()];
}

