/**
 * An image store: one OCI image layout directory (image-spec image-layout.md) holding many
 * images. `index.json` lists one manifest descriptor per `name:tag`, annotated with
 * `io.containerd.image.name` (the full name) and `org.opencontainers.image.ref.name` (the tag),
 * so the directory is also importable with `ctr images import`.
 *
 *   <root>/oci-layout               {"imageLayoutVersion":"1.0.0"}
 *   <root>/index.json               {schemaVersion:2, manifests:[…]}
 *   <root>/blobs/sha256/<hex>       content-addressed blobs (manifests, configs, layers)
 *
 * Concurrency: blobs are written to a temp file and renamed, so readers (the registry) never see
 * a partial blob, and concurrent writers of the same blob are harmless. `index.json` is replaced
 * atomically too. The functions here take no lock: `buildImage`, `importImages` and
 * `removeImages` call them under the store lock (store-lock.ts), which keeps tag updates from
 * being lost and garbage collection from racing a write.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import { digestFile, digestHex, hashToFile, sha256Digest } from './digest.js';
import { ANNOTATION_IMAGE_NAME, ANNOTATION_REF_NAME, type Descriptor, type ImageIndex, MediaType } from './media-types.js';

export interface StoredImage {
  /** Repository name as served by the registry, e.g. `busybox` or `lab/tools`. */
  name: string;
  tag: string;
  /** Digest of the manifest (what `Docker-Content-Digest` reports). */
  digest: string;
  mediaType: string;
  /** Size of the manifest blob. */
  size: number;
}

const LAYOUT_FILE = JSON.stringify({ imageLayoutVersion: '1.0.0' });

export function blobPath(root: string, digest: string): string {
  return join(root, 'blobs', 'sha256', digestHex(digest));
}

/** Creates the layout files when missing. Idempotent. */
export async function initStore(root: string): Promise<void> {
  await mkdir(join(root, 'blobs', 'sha256'), { recursive: true });
  if (!(await exists(join(root, 'oci-layout')))) await atomicWrite(join(root, 'oci-layout'), LAYOUT_FILE);
  if (!(await exists(join(root, 'index.json')))) {
    await atomicWrite(join(root, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: [] }));
  }
}

/** Reads `index.json`; ERR_NOT_FOUND (with what to do) when `root` is not an image store. */
export async function readIndex(root: string): Promise<ImageIndex> {
  let text: string;
  try {
    text = await readFile(join(root, 'index.json'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new AgentError('ERR_NOT_FOUND', `no image store at "${root}" (index.json missing): build an image into it with \`nodelet image build\``, { cause: err });
    }
    throw err;
  }
  const index = JSON.parse(text) as ImageIndex;
  if (index.schemaVersion !== 2 || !Array.isArray(index.manifests)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `"${join(root, 'index.json')}" is not an OCI image index`);
  }
  return index;
}

/** Every `name:tag` in the store, sorted by name then tag. */
export async function listImages(root: string): Promise<StoredImage[]> {
  const index = await readIndex(root);
  const out: StoredImage[] = [];
  for (const d of index.manifests) {
    const full = d.annotations?.[ANNOTATION_IMAGE_NAME];
    if (!full) continue;
    const at = full.lastIndexOf(':');
    if (at <= 0) continue;
    out.push({ name: full.slice(0, at), tag: full.slice(at + 1), digest: d.digest, mediaType: d.mediaType, size: d.size });
  }
  return out.sort((a, b) => (a.name === b.name ? cmp(a.tag, b.tag) : cmp(a.name, b.name)));
}

/** Default image store of a node or server (`nodelet image build|ls|serve`, `nodelet server`). */
export const DEFAULT_IMAGE_STORE = '/var/lib/nodelet/images';

/** Bytes of an image's content (manifest + config + layers), as a registry would transfer them. */
export async function imageContentSize(root: string, manifestDigest: string): Promise<number> {
  const body = await readFile(blobPath(root, manifestDigest), 'utf8');
  const m = JSON.parse(body) as { config?: Descriptor; layers?: Descriptor[]; manifests?: Descriptor[] };
  let size = Buffer.byteLength(body) + (m.config?.size ?? 0);
  for (const l of m.layers ?? []) size += l.size;
  for (const child of m.manifests ?? []) size += await imageContentSize(root, child.digest).catch(() => child.size);
  return size;
}

/** The manifest descriptor tagged `name:tag`, or undefined. */
export async function resolveTag(root: string, name: string, tag: string): Promise<StoredImage | undefined> {
  return (await listImages(root)).find((i) => i.name === name && i.tag === tag);
}

/** Stores `data` as a blob; returns its digest and size. */
export async function putBlob(root: string, data: string | Uint8Array): Promise<{ digest: string; size: number }> {
  const digest = sha256Digest(data);
  const path = blobPath(root, digest);
  if (!(await exists(path))) await atomicWrite(path, data);
  return { digest, size: Buffer.byteLength(data) };
}

/** Copies the file at `src` into the store as a blob. */
export async function putBlobFile(root: string, src: string, signal?: AbortSignal): Promise<{ digest: string; size: number }> {
  const { digest, size } = await digestFile(src, signal);
  const path = blobPath(root, digest);
  if (!(await exists(path))) {
    const tmp = `${path}.tmp-${randomBytes(6).toString('hex')}`;
    await copyFile(src, tmp);
    await rename(tmp, path);
  }
  return { digest, size };
}

/**
 * Streams `source` into the store as a blob, hashing while writing (a temp file in
 * `blobs/sha256/`, renamed to its digest). Returns its digest and size.
 */
export async function putBlobStream(root: string, source: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<{ digest: string; size: number }> {
  const tmp = join(root, 'blobs', 'sha256', `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    const { digest, size } = await hashToFile(source, tmp, signal);
    const path = blobPath(root, digest);
    if (await exists(path)) await rm(tmp, { force: true });
    else await rename(tmp, path);
    return { digest, size };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Points `name:tag` at `manifest` (replacing an earlier image with that name and tag). */
export async function tagImage(root: string, name: string, tag: string, manifest: Descriptor): Promise<void> {
  await tagImages(root, [{ name, tag, manifest }]);
}

/** Points every `name:tag` at its manifest in one `index.json` update (all or nothing). */
export async function tagImages(root: string, tags: readonly { name: string; tag: string; manifest: Descriptor }[]): Promise<void> {
  const index = await readIndex(root);
  const full = new Set(tags.map((t) => `${t.name}:${t.tag}`));
  index.manifests = index.manifests.filter((d) => !full.has(d.annotations?.[ANNOTATION_IMAGE_NAME] ?? ''));
  for (const { name, tag, manifest } of tags) {
    index.manifests.push({
      mediaType: manifest.mediaType,
      digest: manifest.digest,
      size: manifest.size,
      annotations: { [ANNOTATION_IMAGE_NAME]: `${name}:${tag}`, [ANNOTATION_REF_NAME]: tag },
    });
  }
  await writeIndex(root, index);
}

/** Replaces `index.json` atomically, entries sorted by name. */
export async function writeIndex(root: string, index: ImageIndex): Promise<void> {
  index.manifests.sort((a, b) => cmp(a.annotations?.[ANNOTATION_IMAGE_NAME] ?? '', b.annotations?.[ANNOTATION_IMAGE_NAME] ?? ''));
  await atomicWrite(join(root, 'index.json'), JSON.stringify(index, null, 2) + '\n');
}

export async function atomicWrite(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
