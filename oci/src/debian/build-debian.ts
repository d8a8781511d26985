/**
 * `buildDebianImage`: an OCI image from Debian packages (`nodelet image build --debian nginx`).
 * The root is the packages' dependency closure plus a minimal base (base-files for the directory
 * skeleton and /etc/os-release, base-passwd for the system users, dash for /bin/sh), unpacked
 * without maintainer scripts; recipes.ts adds the config and the postinst steps that matter. The
 * layer is as deterministic as every buildImage layer: the same .debs give the same digest.
 *
 *   packages ──resolvePackages──▶ closure ──fetchDebs (cache)──▶ .debs ──unpackDebs──▶ root
 *            root + /etc/passwd, group, nsswitch.conf + recipe.prepare ──buildImage──▶ store name:tag
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImage, type BuiltImage } from '../build.js';
import { fetchDebs, resolvePackages, unpackDebs, type DebianPackage } from './apt.js';
import { recipeFor } from './recipes.js';

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
  /** Where the .debs are kept between builds. */
  cacheDir: string;
  signal?: AbortSignal;
}

export interface BuiltDebianImage extends BuiltImage {
  /** Every package unpacked into the image, in install order. */
  installed: DebianPackage[];
}

export async function buildDebianImage(opts: BuildDebianImageOptions): Promise<BuiltDebianImage> {
  const installed = await resolvePackages([...DEBIAN_BASE_PACKAGES, ...opts.packages], opts.signal);
  const debs = await fetchDebs(installed, opts.cacheDir, opts.signal);
  const recipe = recipeFor(opts.packages);
  const root = await mkdtemp(join(tmpdir(), 'nodelet-debian-'));
  try {
    await unpackDebs(debs, root, opts.signal);
    // base-passwd's postinst writes /etc/passwd and /etc/group from its master copies.
    const users = recipe?.users ?? [];
    const passwd = await readFile(join(root, 'usr/share/base-passwd/passwd.master'), 'utf8');
    const group = await readFile(join(root, 'usr/share/base-passwd/group.master'), 'utf8');
    await writeFile(join(root, 'etc/passwd'), passwd + users.map((u) => `${u.passwd}\n`).join(''), { mode: 0o644 });
    await writeFile(join(root, 'etc/group'), group + users.map((u) => `${u.group}\n`).join(''), { mode: 0o644 });
    await writeFile(join(root, 'etc/nsswitch.conf'), NSSWITCH_CONF, { mode: 0o644 });
    await recipe?.prepare?.(root);
    const c = recipe?.config ?? { cmd: ['sh'] };
    const built = await buildImage({
      store: opts.store,
      name: opts.name,
      tag: opts.tag,
      dirs: [{ from: root, to: '/' }],
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
