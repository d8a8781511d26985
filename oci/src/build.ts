/**
 * `buildImage`: files and directories → an OCI image in an image store (one new layer, on top of
 * an optional base image).
 *
 * Deterministic: the layer is an uncompressed tar written by tar-writer.ts (ustar/pax headers,
 * mtime 0, uid/gid 0 unless `owners` names a path, empty owner names, entries sorted, modes explicit and independent of the
 * umask, missing parent directories 0755); the config carries a fixed `created` time; JSON is
 * serialised with a fixed key order. The same input gives the same layer, config and manifest
 * digests on every machine (tested in build.test.ts). No external tar program is involved.
 *
 *   files/dirs/symlinks ──RootfsTree──▶ sorted entries ──tarStream──▶ layer blob (hashed while written)
 *                     config.json (diff_ids = [layer digest]) ──▶ blobs
 *                     manifest.json ──▶ blobs ──▶ index.json "name:tag"
 */
import { readFile } from 'node:fs/promises';
import { AgentError } from '@nodelet/base';
import { blobPath, initStore, putBlob, putBlobFile, putBlobStream, resolveTag, tagImage } from './layout.js';
import { type Descriptor, hostArchitecture, type ImageConfig, type ImageManifest, type ImageRuntimeConfig, MediaType } from './media-types.js';
import { validateRepositoryName, validateTag } from './reference.js';
import { RootfsTree, type PathOwner } from './rootfs-tree.js';
import { withStoreLock } from './store-lock.js';
import { tarStream } from './tar-writer.js';

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
  /**
   * Owners (and modes) of paths the files, dirs or symlinks above put in the image, applied after
   * them; every other entry belongs to root (uid/gid 0). Debian images use it for what dpkg and
   * the maintainer scripts would chown.
   */
  owners?: PathOwner[];
  config?: {
    entrypoint?: string[];
    /** KEY=VALUE; a standard PATH is added unless one is given. */
    cmd?: string[];
    env?: string[];
    workingDir?: string;
    user?: string;
    labels?: Record<string, string>;
    /** `80/tcp`, `53/udp`: recorded in ExposedPorts (documentation for users; nothing opens them). */
    exposedPorts?: string[];
    /** The signal that stops the main process (`SIGQUIT` for nginx); the runtime's default is SIGTERM. */
    stopSignal?: string;
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

/**
 * Builds `name:tag` into `store`. Replaces an earlier image of that name and tag. Holds the
 * store's write lock (store-lock.ts) while it writes.
 */
export async function buildImage(opts: BuildImageOptions): Promise<BuiltImage> {
  validateRepositoryName(opts.name);
  validateTag(opts.tag);
  opts.signal?.throwIfAborted();
  const tree = new RootfsTree();
  for (const d of opts.dirs ?? []) await tree.addTree(d.from, d.to, opts.signal);
  for (const f of opts.files ?? []) await tree.addFile(f.from, f.to, f.mode);
  for (const l of opts.symlinks ?? []) tree.addSymlink(l.to, l.target);
  for (const o of opts.owners ?? []) tree.setOwner(o);
  const entries = tree.entries();

  return withStoreLock(opts.store, async () => {
    await initStore(opts.store);
    const base = opts.base ? await loadBase(opts.store, opts.base, opts.signal) : undefined;
    const layerBlob = await putBlobStream(opts.store, tarStream(entries, opts.signal), opts.signal);
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
  }, { signal: opts.signal });
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
  if (c.exposedPorts) {
    const ports: Record<string, Record<string, never>> = { ...base.ExposedPorts };
    for (const p of c.exposedPorts) {
      if (!/^\d{1,5}\/(tcp|udp|sctp)$/.test(p)) throw new AgentError('ERR_INVALID_ARGUMENT', `exposed port "${p}" is not PORT/tcp, PORT/udp or PORT/sctp`);
      ports[p] = {};
    }
    merged.ExposedPorts = ports;
  }
  if (c.stopSignal) {
    if (!/^(SIG[A-Z0-9+]+|\d+)$/.test(c.stopSignal)) throw new AgentError('ERR_INVALID_ARGUMENT', `stop signal "${c.stopSignal}" is not a signal name (SIGQUIT) or number`);
    merged.StopSignal = c.stopSignal;
  }
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
  const found = await resolveTag(from, ref.name, ref.tag).catch(() => undefined); // not resolvable in that store: the error below says so
  if (!found) {
    throw new AgentError('ERR_NOT_FOUND', `base image "${ref.name}:${ref.tag}" is not in store "${from}": build it first (the lab images: nodelet image build --lab --store ${from})`);
  }
  const manifest = JSON.parse(await readFile(blobPath(from, found.digest), 'utf8')) as ImageManifest;
  if ((manifest.mediaType !== MediaType.ociManifest && manifest.mediaType !== MediaType.dockerManifest) || !Array.isArray(manifest.layers)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `base image "${ref.name}:${ref.tag}" is a ${manifest.mediaType}, not a single-platform image manifest`);
  }
  const config = JSON.parse(await readFile(blobPath(from, manifest.config.digest), 'utf8')) as ImageConfig;
  if (from !== store) for (const l of manifest.layers) await putBlobFile(store, blobPath(from, l.digest), signal);
  return { manifest, config };
}
