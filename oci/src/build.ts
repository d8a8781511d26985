/**
 * `buildImage`: files and directories → a single-layer OCI image in an image store.
 *
 * Deterministic: the layer is an uncompressed GNU tar made by the `tar` binary with sorted
 * entries, mtime 0, uid/gid 0 and numeric owners, no xattrs/ACLs; the config carries a fixed
 * `created` time; JSON is serialised with a fixed key order. The same input therefore gives the
 * same layer, config and manifest digests on every machine with the same GNU tar (1.34 on
 * Debian 12; tested in build.test.ts).
 *
 *   files/dirs/symlinks ──copy──▶ <tmp>/rootfs ──tar──▶ layer.tar ──▶ blobs
 *                                         config.json (diff_ids = [layer digest]) ──▶ blobs
 *                                         manifest.json ──▶ blobs ──▶ index.json "name:tag"
 */
import { chmod, cp, lstat, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { AgentError } from '@nodelet/base';
import { runTool } from './exec.js';
import { blobPath, initStore, putBlob, putBlobFile, resolveTag, tagImage } from './layout.js';
import { type Descriptor, hostArchitecture, type ImageConfig, type ImageManifest, type ImageRuntimeConfig, MediaType } from './media-types.js';
import { validateRepositoryName, validateTag } from './reference.js';

export interface BuildFile {
  /** Path on this machine. */
  from: string;
  /** Absolute path inside the image, e.g. `/bin/pause`. */
  to: string;
  /** File mode; defaults to the source file's mode. */
  mode?: number;
}

export interface BuildDir {
  from: string;
  to: string;
}

export interface BuildSymlink {
  /** Absolute path of the link inside the image. */
  to: string;
  /** What the link points at (usually relative or absolute inside the image). */
  target: string;
}

export interface BuildImageOptions {
  /** Image store (OCI layout) to write into; created when missing. */
  store: string;
  name: string;
  tag: string;
  files?: BuildFile[];
  dirs?: BuildDir[];
  symlinks?: BuildSymlink[];
  config?: {
    entrypoint?: string[];
    /** KEY=VALUE; a standard PATH is added unless one is given. */
    cmd?: string[];
    env?: string[];
    workingDir?: string;
    user?: string;
    labels?: Record<string, string>;
  };
  /**
   * Build on top of this image: its layers come first, its config is the starting point
   * (Env merged by key; a new entrypoint resets the base Cmd, as a Dockerfile ENTRYPOINT does).
   * `store` defaults to the target store; blobs from another store are copied in.
   */
  base?: { name: string; tag: string; store?: string };
  /** RFC 3339 creation time recorded in the config; fixed by default for reproducibility. */
  created?: string;
  signal?: AbortSignal;
}

export interface BuiltImage {
  name: string;
  tag: string;
  manifest: Descriptor;
  config: Descriptor;
  layers: Descriptor[];
}

const EPOCH = '1970-01-01T00:00:00Z';
const DEFAULT_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];

/** Builds `name:tag` into `store`. Replaces an earlier image of that name and tag. */
export async function buildImage(opts: BuildImageOptions): Promise<BuiltImage> {
  validateRepositoryName(opts.name);
  validateTag(opts.tag);
  opts.signal?.throwIfAborted();
  const work = await mkdtemp(join(tmpdir(), 'nodelet-image-'));
  try {
    const rootfs = join(work, 'rootfs');
    await mkdir(rootfs, { mode: 0o755 });
    await populate(rootfs, opts);
    const layerFile = join(work, 'layer.tar');
    await runTool(
      'tar',
      ['--create', `--file=${layerFile}`, `--directory=${rootfs}`, '--sort=name', '--mtime=@0', '--owner=0', '--group=0',
        '--numeric-owner', '--format=gnu', '--no-acls', '--no-selinux', '--no-xattrs', '.'],
      { signal: opts.signal },
    );
    await initStore(opts.store);
    const base = opts.base ? await loadBase(opts.store, opts.base, opts.signal) : undefined;
    const layerBlob = await putBlobFile(opts.store, layerFile, opts.signal);
    const layer: Descriptor = { mediaType: MediaType.ociLayer, digest: layerBlob.digest, size: layerBlob.size };
    const layers = [...(base?.manifest.layers ?? []), layer];
    const imageConfig: ImageConfig = {
      architecture: base?.config.architecture ?? hostArchitecture(),
      os: 'linux',
      created: opts.created ?? EPOCH,
      config: runtimeConfig(opts.config, base?.config.config),
      rootfs: { type: 'layers', diff_ids: [...(base?.config.rootfs.diff_ids ?? []), layer.digest] },
      history: [...(base?.config.history ?? []), { created: opts.created ?? EPOCH, created_by: 'nodelet image build' }],
    };
    const configBlob = await putBlob(opts.store, JSON.stringify(imageConfig));
    const config: Descriptor = { mediaType: MediaType.ociConfig, digest: configBlob.digest, size: configBlob.size };
    const manifestBody: ImageManifest = { schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers };
    const manifestBlob = await putBlob(opts.store, JSON.stringify(manifestBody));
    const manifest: Descriptor = { mediaType: MediaType.ociManifest, digest: manifestBlob.digest, size: manifestBlob.size };
    await tagImage(opts.store, opts.name, opts.tag, manifest);
    return { name: opts.name, tag: opts.tag, manifest, config, layers };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Key order of the runtime config; fixed so that the config digest is stable. */
const CONFIG_KEYS = ['Env', 'Entrypoint', 'Cmd', 'WorkingDir', 'User', 'Labels', 'ExposedPorts', 'StopSignal'] as const;

function runtimeConfig(c: BuildImageOptions['config'] = {}, base: ImageRuntimeConfig = {}): ImageRuntimeConfig {
  // Env merges by key over the base; a standard PATH unless someone sets one (runc resolves a bare Cmd through it).
  const all = [...(base.Env ?? []), ...(c.env ?? [])];
  if (!all.some((e) => e.startsWith('PATH='))) all.unshift(...DEFAULT_ENV);
  const env = new Map<string, string>();
  for (const e of all) env.set(e.split('=')[0]!, e);
  const merged: ImageRuntimeConfig = { ...base, Env: [...env.values()] };
  if (c.entrypoint) {
    merged.Entrypoint = c.entrypoint;
    delete merged.Cmd; // Dockerfile semantics: a new ENTRYPOINT drops the inherited CMD
  }
  if (c.cmd) merged.Cmd = c.cmd;
  if (c.workingDir) merged.WorkingDir = c.workingDir;
  if (c.user) merged.User = c.user;
  if (c.labels) merged.Labels = { ...base.Labels, ...c.labels };
  const out: Record<string, unknown> = {};
  for (const k of CONFIG_KEYS) if (merged[k] !== undefined) out[k] = merged[k];
  return out as ImageRuntimeConfig;
}

interface BaseImage {
  manifest: ImageManifest;
  config: ImageConfig;
}

/** Reads the base image and makes sure its layers are in `store` (copied from another store). */
async function loadBase(store: string, ref: NonNullable<BuildImageOptions['base']>, signal?: AbortSignal): Promise<BaseImage> {
  const from = ref.store ?? store;
  const found = await resolveTag(from, ref.name, ref.tag).catch(() => undefined);
  if (!found) {
    throw new AgentError('ERR_NOT_FOUND', `base image "${ref.name}:${ref.tag}" is not in store "${from}": build it first (the lab images: nodelet image build --lab --store ${from})`);
  }
  const manifest = JSON.parse(await readFile(blobPath(from, found.digest), 'utf8')) as ImageManifest;
  if (manifest.mediaType !== MediaType.ociManifest || !Array.isArray(manifest.layers)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `base image "${ref.name}:${ref.tag}" is a ${manifest.mediaType}, not a single-platform OCI image manifest`);
  }
  const config = JSON.parse(await readFile(blobPath(from, manifest.config.digest), 'utf8')) as ImageConfig;
  if (from !== store) for (const l of manifest.layers) await putBlobFile(store, blobPath(from, l.digest), signal);
  return { manifest, config };
}

async function populate(rootfs: string, opts: BuildImageOptions): Promise<void> {
  for (const d of opts.dirs ?? []) {
    const dest = d.to === '/' ? rootfs : inside(rootfs, d.to);
    await mkdirs(rootfs, dirname(dest));
    await cp(d.from, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true }).catch((err) => {
      throw new AgentError('ERR_INVALID_ARGUMENT', `cannot copy directory "${d.from}" into the image: ${(err as Error).message}`, { cause: err });
    });
  }
  for (const f of opts.files ?? []) {
    const dest = inside(rootfs, f.to);
    await mkdirs(rootfs, dirname(dest));
    let srcMode: number;
    try {
      srcMode = (await lstat(f.from)).mode & 0o7777;
    } catch (err) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read "${f.from}" for the image: ${(err as Error).message}`, { cause: err });
    }
    await cp(f.from, dest, { dereference: true, force: true });
    await chmod(dest, f.mode ?? srcMode);
  }
  for (const s of opts.symlinks ?? []) {
    const dest = inside(rootfs, s.to);
    await mkdirs(rootfs, dirname(dest));
    await rm(dest, { force: true });
    await symlink(s.target, dest);
  }
  // Copying a directory onto "/" gives the root its source's mode; the image root is always 0755.
  await chmod(rootfs, 0o755);
}

/** Maps an absolute in-image path to the staging dir; rejects paths that escape it. */
function inside(rootfs: string, to: string): string {
  if (!to.startsWith('/')) throw new AgentError('ERR_INVALID_ARGUMENT', `image path "${to}" must be absolute`);
  const norm = posix.normalize(to);
  if (norm === '/' || norm.split('/').includes('..')) throw new AgentError('ERR_INVALID_ARGUMENT', `image path "${to}" is not a file path inside the image`);
  return join(rootfs, norm);
}

/** Creates missing parents with mode 0755 regardless of the umask, so layers do not depend on it. */
async function mkdirs(rootfs: string, dir: string): Promise<void> {
  const rel = dir.slice(rootfs.length).split('/').filter(Boolean);
  let cur = rootfs;
  for (const part of rel) {
    cur = join(cur, part);
    try {
      await mkdir(cur);
      await chmod(cur, 0o755);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
