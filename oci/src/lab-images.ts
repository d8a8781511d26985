/**
 * The two images every lab node needs, built offline from this machine's files:
 *   - `pause:3.9`      the sandbox image: the static `pause` program (images/pause/pause.c)
 *   - `busybox:latest` the default workload image: the dynamically linked /bin/busybox of Debian's
 *                      `busybox` package with the shared libraries `ldd` names (glibc, whose
 *                      resolver and NSS give wget/nc/ping getaddrinfo with the pod's search path;
 *                      the static build's glibc resolver crashes wget), /etc/nsswitch.conf, a
 *                      symlink per applet, minimal /etc/passwd and /etc/group, a 1777 /tmp; Cmd ["sh"]
 * Used by the test harness (`@nodelet/lab-runtime/testing`), `make up` and `nodelet server`.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@nodelet/base';
import { buildImage } from './build.js';
import { runTool } from './exec.js';
import { fetchDebs, resolvePackages, unpackDebs } from './debian/apt.js';
import { NSSWITCH_CONF } from './debian/build-debian.js';
import { blobPath, resolveTag, type StoredImage } from './layout.js';
import type { ImageConfig, ImageManifest } from './media-types.js';

export const LAB_IMAGES = {
  pause: { name: 'pause', tag: '3.9' },
  busybox: { name: 'busybox', tag: 'latest' },
} as const;

/** The checkout (or install) root: this file is <root>/oci/{src,dist}/lab-images.*. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PAUSE_SOURCE = join(REPO_ROOT, 'images', 'pause', 'pause.c');
export const DEFAULT_PAUSE_BINARY = join(REPO_ROOT, 'build', 'pause');
export const DEFAULT_LAB_IMAGE_DIR = join(REPO_ROOT, 'build', 'images');
/** Where the .debs of Debian-built images (and the lab busybox) are kept between builds. */
export const DEFAULT_DEB_CACHE = join(REPO_ROOT, 'build', 'debs');
/**
 * Label on the lab busybox naming how it was built: a store holding a busybox without it (the
 * static build of earlier versions) is rebuilt by ensureLabImages.
 */
export const LAB_BUSYBOX_LABEL = 'org.nodelet.lab-image';
const LAB_BUSYBOX_RECIPE = 'busybox-dynamic-1';

export interface EnsureLabImagesOptions {
  /** Static pause binary; compiled from images/pause/pause.c when missing. */
  pauseBinary?: string;
  /** A busybox binary to use instead of the one in Debian's `busybox` package (its libraries are found with ldd). */
  busyboxBinary?: string;
  /** Cache of downloaded .debs (default DEFAULT_DEB_CACHE). */
  debCache?: string;
  signal?: AbortSignal;
}

export interface LabImages {
  dir: string;
  pause: StoredImage;
  busybox: StoredImage;
}

/**
 * Makes sure image store `dir` holds both lab images. Safe when several processes race: a fresh
 * store is built in a sibling temp dir and renamed into place; the loser of the rename discards
 * its copy and uses the winner's (the builds are deterministic, so both are identical).
 */
export async function ensureLabImages(dir: string, opts: EnsureLabImagesOptions = {}): Promise<LabImages> {
  const have = await present(dir);
  if (have) return have;
  const pauseBinary = opts.pauseBinary ?? (await ensurePauseBinary(DEFAULT_PAUSE_BINARY, opts.signal));
  await mkdir(dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const unpacked = await mkdtemp(join(tmpdir(), 'nodelet-busybox-deb-'));
  try {
    const busybox = opts.busyboxBinary ?? (await debianBusybox(unpacked, opts.debCache ?? DEFAULT_DEB_CACHE, opts.signal));
    try {
      await access(busybox);
    } catch (err) {
      throw new AgentError('ERR_FAILED_PRECONDITION', `"${busybox}" is missing`, { cause: err });
    }
    await buildLabImages(tmp, pauseBinary, busybox, opts.signal);
    try {
      await rename(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
      // Someone else finished first, or an older incomplete store is in the way: fill it in place.
      if (!(await present(dir))) await buildLabImages(dir, pauseBinary, busybox, opts.signal);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(unpacked, { recursive: true, force: true });
  }
  const done = await present(dir);
  if (!done) throw new AgentError('ERR_INTERNAL', `lab images missing from "${dir}" after building them`);
  return done;
}

async function buildLabImages(store: string, pauseBinary: string, busybox: string, signal?: AbortSignal): Promise<void> {
  await buildImage({
    store,
    ...LAB_IMAGES.pause,
    files: [{ from: pauseBinary, to: '/pause', mode: 0o755 }],
    config: { entrypoint: ['/pause'] },
    signal,
  });
  const applets = (await runTool(busybox, ['--list'], { signal })).split('\n').map((s) => s.trim()).filter((s) => s && s !== 'busybox' && !s.includes('/'));
  const libs = await sharedLibraries(busybox, signal);
  const etc = await mkdtemp(join(tmpdir(), 'nodelet-busybox-'));
  try {
    await mkdir(join(etc, 'etc'));
    await mkdir(join(etc, 'tmp'));
    await mkdir(join(etc, 'root'));
    await writeFile(join(etc, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n');
    await writeFile(join(etc, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    await writeFile(join(etc, 'etc', 'nsswitch.conf'), NSSWITCH_CONF);
    await chmod(join(etc, 'etc', 'nsswitch.conf'), 0o644);
    await chmod(join(etc, 'etc'), 0o755);
    await chmod(join(etc, 'etc', 'passwd'), 0o644);
    await chmod(join(etc, 'etc', 'group'), 0o644);
    await chmod(join(etc, 'tmp'), 0o1777);
    await chmod(join(etc, 'root'), 0o700);
    await buildImage({
      store,
      ...LAB_IMAGES.busybox,
      dirs: [{ from: etc, to: '/' }],
      files: [{ from: busybox, to: '/bin/busybox', mode: 0o755 }, ...libs.map((l) => ({ from: l, to: l, mode: 0o755 }))],
      symlinks: applets.map((a) => ({ to: `/bin/${a}`, target: 'busybox' })),
      config: { cmd: ['sh'], labels: { [LAB_BUSYBOX_LABEL]: LAB_BUSYBOX_RECIPE } },
      signal,
    });
  } finally {
    await rm(etc, { recursive: true, force: true });
  }
}

/** Unpacks Debian's `busybox` package (the dynamically linked build) into `into`; returns its binary. */
async function debianBusybox(into: string, cacheDir: string, signal?: AbortSignal): Promise<string> {
  const pkg = (await resolvePackages(['busybox'], signal)).find((p) => p.name === 'busybox');
  if (!pkg) throw new AgentError('ERR_INTERNAL', 'apt did not resolve Debian package "busybox"');
  await unpackDebs(await fetchDebs([pkg], cacheDir, signal), into, signal);
  return join(into, 'bin', 'busybox');
}

/**
 * The absolute paths of the shared libraries and the loader `ldd` lists for `binary` (none for a
 * static one). They are copied into the image at the same paths, where the loader looks.
 */
export async function sharedLibraries(binary: string, signal?: AbortSignal): Promise<string[]> {
  let out: string;
  try {
    out = await runTool('ldd', [binary], { signal });
  } catch (err) {
    // ldd exits 1 for a static executable ("not a dynamic executable").
    if (/not a dynamic executable/.test((err as Error).message)) return [];
    throw err;
  }
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const m = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (m) libs.add(m[1]!);
    else if (/not found/.test(line)) throw new AgentError('ERR_FAILED_PRECONDITION', `${binary} needs a library this machine lacks: ${line.trim()}`);
  }
  return [...libs].sort();
}

/** Compiles the pause program to `out` unless it exists (atomic: compile to a temp name, rename). */
export async function ensurePauseBinary(out: string, signal?: AbortSignal): Promise<string> {
  try {
    await access(out);
    return out;
  } catch {
    // Not built yet: compile it below.
  }
  await mkdir(dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await runTool('gcc', ['-static', '-Os', '-s', '-Wall', '-Wextra', '-o', tmp, PAUSE_SOURCE], { signal });
    await rename(tmp, out);
  } finally {
    await rm(tmp, { force: true });
  }
  return out;
}

async function present(dir: string): Promise<LabImages | undefined> {
  try {
    const pause = await resolveTag(dir, LAB_IMAGES.pause.name, LAB_IMAGES.pause.tag);
    const busybox = await resolveTag(dir, LAB_IMAGES.busybox.name, LAB_IMAGES.busybox.tag);
    if (!pause || !busybox) return undefined;
    const manifest = JSON.parse(await readFile(blobPath(dir, busybox.digest), 'utf8')) as ImageManifest;
    const config = JSON.parse(await readFile(blobPath(dir, manifest.config.digest), 'utf8')) as ImageConfig;
    return config.config?.Labels?.[LAB_BUSYBOX_LABEL] === LAB_BUSYBOX_RECIPE ? { dir, pause, busybox } : undefined;
  } catch {
    return undefined;
  }
}
