/**
 * `importImages`: a `docker save` archive or an OCI image-layout tar → images in a store, each
 * tag then served by the registry as `<registry>/<name>:<tag>` (store-name.ts).
 *
 *   1. read     one streaming pass; every member staged under <store>/.nodelet-import-*,
 *               hashed while written (read-archive.ts)
 *   2. plan     index.json → planOciLayout, else manifest.json → planDockerSave; every digest,
 *               size, media type and diff_id checked before anything reaches the store
 *   3. name     the archive's tags, or the caller's (`--tag`, one image only)
 *   4. commit   staged blobs renamed into blobs/sha256/, new manifests written, then index.json
 *               last, in one atomic update
 *   5. cleanup  the staging directory is removed whatever happened
 *
 * A corrupt archive fails in 1 or 2 and leaves the store as it was. Runs under the store lock.
 */
import { mkdtemp, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import { blobPath, initStore, putBlob, tagImages } from '../layout.js';
import type { Descriptor } from '../media-types.js';
import { type StoreName, storeNameOf } from '../store-name.js';
import { withStoreLock } from '../store-lock.js';
import { planDockerSave } from './docker-save.js';
import { planOciLayout } from './oci-layout.js';
import { readArchive } from './read-archive.js';
import { type ArchiveImage, byDigest } from './verify.js';

export interface ImportImagesOptions {
  /** Image store to import into; created when missing. */
  store: string;
  /** Name the (single) image of the archive with these references instead of its own tags. */
  tags?: string[];
  signal?: AbortSignal;
}

export interface ImportedImage extends StoreName {
  manifest: Descriptor;
  /** Which kind of archive it came from. */
  format: 'oci' | 'docker';
}

/** Staging directories of imports live in the store (same filesystem, so commit is a rename). */
export const IMPORT_STAGING_PREFIX = '.nodelet-import-';

/** Imports every image of `archive` into `opts.store`; returns one entry per tag. */
export async function importImages(archive: string, opts: ImportImagesOptions): Promise<ImportedImage[]> {
  const override = opts.tags?.map(storeNameOf);
  const created = !(await isDir(opts.store));
  try {
    return await withStoreLock(opts.store, () => importLocked(archive, opts.store, override, opts.signal), { signal: opts.signal });
  } catch (err) {
    // A store this call created and never filled goes away again (rmdir fails unless empty).
    if (created) await rmdir(opts.store).catch(() => undefined);
    throw err;
  }
}

async function importLocked(archive: string, store: string, override: StoreName[] | undefined, signal?: AbortSignal): Promise<ImportedImage[]> {
  const staging = await mkdtemp(join(store, IMPORT_STAGING_PREFIX));
  try {
    // 1. read
    const contents = await readArchive(archive, staging, signal);
    // 2. plan
    const format = contents.docs.has('index.json') ? 'oci' : contents.docs.has('manifest.json') ? 'docker' : undefined;
    if (!format) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `"${archive}" is not an image archive: it has neither index.json (OCI image layout) nor manifest.json (docker save)`);
    }
    const images = format === 'oci' ? await planOciLayout(contents, signal) : await planDockerSave(contents, signal);
    if (images.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', `"${archive}" holds no images`);
    // 3. name
    if (override) {
      if (images.length > 1) {
        throw new AgentError('ERR_INVALID_ARGUMENT', `"${archive}" holds ${images.length} images; --tag names one image only (import it without --tag to keep the archive's tags)`);
      }
      images[0]!.names = override;
    }
    const unnamed = images.find((i) => i.names.length === 0);
    if (unnamed) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `image ${unnamed.manifest.digest} in "${archive}" has no tag (no RepoTags or io.containerd.image.name): name it with --tag NAME:TAG`);
    }
    // 4. commit
    await initStore(store);
    const staged = byDigest(contents);
    for (const image of images) await commit(store, image, staged, signal);
    const tags = images.flatMap((i) => i.names.map((n) => ({ ...n, manifest: i.manifest })));
    await tagImages(store, tags);
    return tags.map((t) => ({ name: t.name, tag: t.tag, manifest: t.manifest, format }));
  } finally {
    // 5. cleanup
    await rm(staging, { recursive: true, force: true });
  }
}

async function commit(store: string, image: ArchiveImage, staged: ReturnType<typeof byDigest>, signal?: AbortSignal): Promise<void> {
  for (const digest of image.blobs) {
    signal?.throwIfAborted();
    const dest = blobPath(store, digest);
    const f = staged.get(digest);
    if (!f || (await isFile(dest))) continue;
    await rename(f.file, dest);
    staged.delete(digest);
  }
  if (image.manifestBody) await putBlob(store, image.manifestBody);
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false; // absent or unreadable: not a directory
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false; // absent or unreadable: not a file
}
