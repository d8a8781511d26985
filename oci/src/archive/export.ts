/**
 * `exportImages`: images of a store → one tar that `nodelet image import`, `ctr images import`
 * and `docker load` read. Written with tar-writer.ts, so the same images give the same bytes.
 *
 *   oci     blobs/sha256/<hex>…, index.json (one entry per tag: io.containerd.image.name =
 *           the qualified name, e.g. docker.io/library/busybox:latest; ref.name = the tag),
 *           oci-layout
 *   docker  blobs/sha256/<hex>…, manifest.json ([{Config, RepoTags, Layers}], Docker 25's
 *           layout); single-platform images only
 *
 * Blobs are streamed from the store; a blob whose size differs from its descriptor stops the
 * export (ERR_FAILED_PRECONDITION) rather than writing a broken archive.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AgentError } from '@nodelet/base';
import { digestHex } from '../digest.js';
import { blobPath, resolveTag } from '../layout.js';
import { ANNOTATION_IMAGE_NAME, ANNOTATION_REF_NAME, type Descriptor, type ImageIndex, type ImageManifest, INDEX_MEDIA_TYPES, MediaType } from '../media-types.js';
import { familiarReference, parseImageReference } from '../reference.js';
import { qualifiedNameOf, type StoreName } from '../store-name.js';
import { type TarEntry, tarStream } from '../tar-writer.js';

export type ExportFormat = 'oci' | 'docker';

export interface ExportImagesOptions {
  store: string;
  images: StoreName[];
  /** Default `oci`. */
  format?: ExportFormat;
  signal?: AbortSignal;
}

interface Resolved extends StoreName {
  manifest: Descriptor;
}

/** Writes the archive to `file` (temp file + rename: a failed export leaves no partial file). */
export async function exportImagesToFile(file: string, opts: ExportImagesOptions): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await exportImages(createWriteStream(tmp, { flags: 'wx' }), opts);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Streams the archive into `out` (ended when done). Reads the store without locking it. */
export async function exportImages(out: Writable, opts: ExportImagesOptions): Promise<void> {
  if (opts.images.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', 'name at least one image to export');
  const images: Resolved[] = [];
  for (const s of opts.images) {
    const found = await resolveTag(opts.store, s.name, s.tag);
    if (!found) throw new AgentError('ERR_NOT_FOUND', `image "${s.name}:${s.tag}" is not in store "${opts.store}"`);
    images.push({ ...s, manifest: { mediaType: found.mediaType, digest: found.digest, size: found.size } });
  }
  const format = opts.format ?? 'oci';
  const blobs = new Map<string, number>();
  const docker: { Config: string; RepoTags: string[]; Layers: string[] }[] = [];
  for (const image of images) {
    const m = await collect(opts.store, image.manifest, blobs, `${image.name}:${image.tag}`);
    if (format === 'docker') {
      if (!m) throw new AgentError('ERR_INVALID_ARGUMENT', `image "${image.name}:${image.tag}" is a multi-platform index; a docker archive holds single-platform images only (use --format oci)`);
      const path = (d: Descriptor): string => `blobs/sha256/${digestHex(d.digest)}`;
      const tag = familiarReference(parseImageReference(`${image.name}:${image.tag}`));
      const same = docker.find((e) => e.Config === path(m.config) && e.Layers.join() === m.layers.map(path).join());
      if (same) same.RepoTags.push(tag);
      else docker.push({ Config: path(m.config), RepoTags: [tag], Layers: m.layers.map(path) });
    }
  }

  const entries: TarEntry[] = [{ type: 'dir', path: 'blobs', mode: 0o755 }, { type: 'dir', path: 'blobs/sha256', mode: 0o755 }];
  for (const [digest, size] of [...blobs].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = blobPath(opts.store, digest);
    entries.push({ type: 'file', path: `blobs/sha256/${digestHex(digest)}`, mode: 0o644, size, what: `blob ${digest} of store "${opts.store}"`, open: (signal) => createReadStream(file, { signal }) });
  }
  if (format === 'oci') {
    const index: ImageIndex = {
      schemaVersion: 2,
      mediaType: MediaType.ociIndex,
      manifests: images.map((i) => ({ ...i.manifest, annotations: { [ANNOTATION_IMAGE_NAME]: qualifiedNameOf(i), [ANNOTATION_REF_NAME]: i.tag } })),
    };
    entries.push(doc('index.json', JSON.stringify(index)), doc('oci-layout', JSON.stringify({ imageLayoutVersion: '1.0.0' })));
  } else {
    entries.push(doc('manifest.json', JSON.stringify(docker)));
  }
  await pipeline(tarStream(entries, opts.signal), out, { signal: opts.signal });
}

/**
 * Adds the blobs `d` needs (itself, config, layers; an index's manifests) to `blobs`, checking
 * each is in the store with its descriptor's size. Returns the manifest, or undefined for an index.
 */
async function collect(store: string, d: Descriptor, blobs: Map<string, number>, what: string): Promise<ImageManifest | undefined> {
  await need(store, d, blobs, what);
  const doc = JSON.parse(await readFile(blobPath(store, d.digest), 'utf8')) as ImageManifest & { manifests?: Descriptor[] };
  if (INDEX_MEDIA_TYPES.has(doc.mediaType ?? d.mediaType)) {
    for (const child of doc.manifests ?? []) await collect(store, child, blobs, what);
    return undefined;
  }
  await need(store, doc.config, blobs, what);
  for (const l of doc.layers) await need(store, l, blobs, what);
  return doc;
}

async function need(store: string, d: Descriptor, blobs: Map<string, number>, what: string): Promise<void> {
  if (blobs.has(d.digest)) return;
  const st = await stat(blobPath(store, d.digest)).catch(() => undefined); // missing or unreadable: the error below names the blob
  if (!st) throw new AgentError('ERR_NOT_FOUND', `blob ${d.digest} of image "${what}" is missing from store "${store}"`);
  if (st.size !== d.size) throw new AgentError('ERR_FAILED_PRECONDITION', `blob ${d.digest} of image "${what}" is ${st.size} bytes in store "${store}", but its descriptor says ${d.size}`);
  blobs.set(d.digest, d.size);
}

function doc(path: string, text: string): TarEntry {
  const body = Buffer.from(text);
  return { type: 'file', path, mode: 0o644, size: body.length, open: () => Readable.from([body]) };
}
