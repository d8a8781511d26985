/**
 * The two images every lab node needs, built offline from this machine's files:
 *   - `pause:3.9`      the sandbox image: the static `pause` program (images/pause/pause.c)
 *   - `busybox:latest` the default workload image: Debian's static /bin/busybox with a symlink
 *                      per applet, minimal /etc/passwd and /etc/group, a 1777 /tmp; Cmd ["sh"]
 * Used by the test harness (`@nodelet/lab-runtime/testing`), `make up` and `nodelet server`.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@nodelet/base';
import { buildImage } from './build.js';
import { runTool } from './exec.js';
import { resolveTag, type StoredImage } from './layout.js';

export const LAB_IMAGES = {
  pause: { name: 'pause', tag: '3.9' },
  busybox: { name: 'busybox', tag: 'latest' },
} as const;

/** The checkout (or install) root: this file is <root>/oci/{src,dist}/lab-images.*. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PAUSE_SOURCE = join(REPO_ROOT, 'images', 'pause', 'pause.c');
export const DEFAULT_PAUSE_BINARY = join(REPO_ROOT, 'build', 'pause');
export const DEFAULT_LAB_IMAGE_DIR = join(REPO_ROOT, 'build', 'images');
export const DEFAULT_BUSYBOX = '/bin/busybox';

export interface EnsureLabImagesOptions {
  /** Static pause binary; compiled from images/pause/pause.c when missing. */
  pauseBinary?: string;
  /** A static busybox (Debian `busybox-static`). */
  busyboxBinary?: string;
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
  const busybox = opts.busyboxBinary ?? DEFAULT_BUSYBOX;
  try {
    await access(busybox);
  } catch (err) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `"${busybox}" is missing: install Debian's busybox-static (apt-get install busybox-static)`, { cause: err });
  }

  await mkdir(dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
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
  const etc = await mkdtemp(join(tmpdir(), 'nodelet-busybox-'));
  try {
    await mkdir(join(etc, 'etc'));
    await mkdir(join(etc, 'tmp'));
    await mkdir(join(etc, 'root'));
    await writeFile(join(etc, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n');
    await writeFile(join(etc, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    await chmod(join(etc, 'etc'), 0o755);
    await chmod(join(etc, 'etc', 'passwd'), 0o644);
    await chmod(join(etc, 'etc', 'group'), 0o644);
    await chmod(join(etc, 'tmp'), 0o1777);
    await chmod(join(etc, 'root'), 0o700);
    await buildImage({
      store,
      ...LAB_IMAGES.busybox,
      dirs: [{ from: etc, to: '/' }],
      files: [{ from: busybox, to: '/bin/busybox', mode: 0o755 }],
      symlinks: applets.map((a) => ({ to: `/bin/${a}`, target: 'busybox' })),
      config: { cmd: ['sh'] },
      signal,
    });
  } finally {
    await rm(etc, { recursive: true, force: true });
  }
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
    return pause && busybox ? { dir, pause, busybox } : undefined;
  } catch {
    return undefined;
  }
}
