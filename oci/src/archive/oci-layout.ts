/**
 * The images of an OCI image-layout archive (`index.json` + `blobs/`), as written by
 * `nodelet image export`, `ctr images export`, `docker save` (Docker 25+), skopeo and buildkit.
 * Manifests are kept byte-for-byte (their digests stay what the registry they came from
 * served), whatever their media type (OCI or Docker schema 2). A multi-platform index is
 * narrowed to one manifest: this machine's platform when the archive has it, else the first
 * linux one it has. Names come from `io.containerd.image.name`, or from
 * `org.opencontainers.image.ref.name` when that holds a whole reference rather than a bare tag.
 */
import { hostArchitecture, INDEX_MEDIA_TYPES, ANNOTATION_IMAGE_NAME, ANNOTATION_REF_NAME, type Descriptor, type ImageConfig, MediaType } from '../media-types.js';
import { isDigest } from '../digest.js';
import { type StoreName, storeNameOf } from '../store-name.js';
import type { ArchiveContents, StagedFile } from './read-archive.js';
import { type ArchiveImage, blobOf, byDigest, compressionOf, compressionOfMediaType, corrupt, parseDoc, readJson, verifyDiffId } from './verify.js';

interface ManifestDoc {
  mediaType?: string;
  manifests?: Descriptor[];
  config?: Descriptor;
  layers?: Descriptor[];
}

/** Verifies and lists the images of an OCI layout archive (`c.docs` holds `index.json`). */
export async function planOciLayout(c: ArchiveContents, signal?: AbortSignal): Promise<ArchiveImage[]> {
  const layout = c.docs.get('oci-layout');
  if (layout && typeof parseDoc<{ imageLayoutVersion?: unknown }>(layout, 'oci-layout').imageLayoutVersion !== 'string') {
    throw corrupt('oci-layout has no imageLayoutVersion');
  }
  const index = parseDoc<{ manifests?: unknown }>(c.docs.get('index.json')!, 'index.json');
  if (!Array.isArray(index.manifests)) throw corrupt('index.json has no "manifests" list');
  const blobs = byDigest(c);
  const images = new Map<string, ArchiveImage>();
  for (const [i, d] of (index.manifests as Descriptor[]).entries()) {
    const what = `index.json manifests[${i}]`;
    checkDescriptor(d, what);
    const image = await resolve(blobs, d, `manifest ${d.digest}`, signal, 0);
    const names = namesOf(d, what);
    const have = images.get(image.manifest.digest);
    if (have) have.names.push(...names.filter((n) => !have.names.some((h) => h.name === n.name && h.tag === n.tag)));
    else images.set(image.manifest.digest, { ...image, names });
  }
  return [...images.values()];
}

async function resolve(blobs: Map<string, StagedFile>, d: Descriptor, what: string, signal: AbortSignal | undefined, depth: number): Promise<ArchiveImage> {
  const f = blobOf(blobs, d, what);
  const { value: m } = await readJson<ManifestDoc>(f, what);
  const mediaType = m.mediaType ?? d.mediaType;
  if (INDEX_MEDIA_TYPES.has(mediaType)) {
    if (depth > 1 || !Array.isArray(m.manifests)) throw corrupt(`${what} is an index nodelet cannot use (nested, or without "manifests")`);
    const child = pickPlatform(m.manifests, blobs);
    if (!child) throw corrupt(`${what} is a multi-platform index, and the archive holds none of its linux image manifests`);
    checkDescriptor(child, `a manifest of ${what}`);
    return resolve(blobs, child, `manifest ${child.digest} (${platformOf(child)})`, signal, depth + 1);
  }
  if (mediaType !== MediaType.ociManifest && mediaType !== MediaType.dockerManifest) throw corrupt(`${what} has media type "${mediaType}", not an image manifest`);
  if (!m.config || !Array.isArray(m.layers)) throw corrupt(`${what} has no config or no layers`);
  const cw = `the config (${m.config?.digest}) of ${what}`;
  checkDescriptor(m.config, cw);
  const { value: config } = await readJson<Partial<ImageConfig>>(blobOf(blobs, m.config, cw), cw);
  const diffIds = config.rootfs?.diff_ids;
  if (!Array.isArray(diffIds) || diffIds.length !== m.layers.length) {
    throw corrupt(`${cw} lists ${Array.isArray(diffIds) ? diffIds.length : 'no'} diff_ids for ${m.layers.length} layers`);
  }
  for (const [i, l] of m.layers.entries()) {
    const lw = `layer ${i} (${l.digest}) of ${what}`;
    checkDescriptor(l, lw);
    const lf = blobOf(blobs, l, lw);
    const declared = compressionOfMediaType(l.mediaType);
    if (!declared) throw corrupt(`${lw} has media type "${l.mediaType}"; nodelet stores tar, tar+gzip and tar+zstd layers only`);
    const actual = compressionOf(lf.head);
    if (actual !== declared) throw corrupt(`${lw} is declared ${l.mediaType} but its content is ${actual === 'tar' ? 'not compressed' : actual}`);
    await verifyDiffId(lf, actual, diffIds[i], lw, signal);
  }
  return { names: [], manifest: { mediaType, digest: d.digest, size: f.size }, blobs: [d.digest, m.config.digest, ...m.layers.map((l) => l.digest)] };
}

/** This machine's platform if present in the archive, else the first linux image manifest present. */
function pickPlatform(children: Descriptor[], blobs: Map<string, StagedFile>): Descriptor | undefined {
  const present = children.filter((c) => c && blobs.has(c.digest) && c.platform?.os === 'linux');
  return present.find((c) => c.platform!.architecture === hostArchitecture()) ?? present[0];
}

function platformOf(d: Descriptor): string {
  return [d.platform?.os, d.platform?.architecture, d.platform?.variant].filter(Boolean).join('/');
}

function namesOf(d: Descriptor, what: string): StoreName[] {
  const full = d.annotations?.[ANNOTATION_IMAGE_NAME];
  const ref = d.annotations?.[ANNOTATION_REF_NAME];
  const name = full ?? (ref && /[:/]/.test(ref) ? ref : undefined);
  if (name === undefined) return [];
  try {
    return [storeNameOf(name)];
  } catch (err) {
    throw corrupt(`${what} names the image "${name}", which is not a tagged image reference (${(err as Error).message})`);
  }
}

function checkDescriptor(d: Descriptor, what: string): void {
  if (!d || typeof d !== 'object' || typeof d.digest !== 'string' || typeof d.mediaType !== 'string' || typeof d.size !== 'number') {
    throw corrupt(`${what} is not a descriptor (want mediaType, digest and size)`);
  }
  if (!isDigest(d.digest)) throw corrupt(`${what} has digest "${d.digest}"; nodelet verifies sha256 digests only`);
}
