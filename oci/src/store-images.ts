/**
 * `inspectImage` and `removeImages` on an image store (`nodelet image inspect|rm`).
 *
 * Removal untags, then collects garbage: every blob reachable from an `index.json` entry (named
 * or not) is kept — manifests, their configs and layers, an index's manifests — and every other
 * blob is deleted, as are leftovers of interrupted writes (temp files, import staging
 * directories). It holds the store lock (store-lock.ts), so a build or import cannot be halfway
 * between writing its blobs and tagging them.
 *
 *   rm a:1 ──▶ index.json without a:1 ──▶ mark: walk every remaining entry ──▶ sweep blobs/sha256
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import { IMPORT_STAGING_PREFIX } from './archive/import.js';
import { blobPath, readIndex, resolveTag, writeIndex } from './layout.js';
import { ANNOTATION_IMAGE_NAME, type Descriptor, type ImageConfig, INDEX_MEDIA_TYPES } from './media-types.js';
import type { StoreName } from './store-name.js';
import { withStoreLock } from './store-lock.js';

export interface InspectedImage extends StoreName {
  digest: string;
  mediaType: string;
  size: number;
  /** The manifest (or index) document. */
  manifest: unknown;
  /** The image config; absent for an index. */
  config?: ImageConfig;
}

/** Manifest and config of `name:tag`; ERR_NOT_FOUND when the store has no such tag. */
export async function inspectImage(root: string, s: StoreName): Promise<InspectedImage> {
  const found = await resolveTag(root, s.name, s.tag);
  if (!found) throw new AgentError('ERR_NOT_FOUND', `image "${s.name}:${s.tag}" is not in store "${root}"`);
  const manifest = JSON.parse(await readFile(blobPath(root, found.digest), 'utf8')) as { mediaType?: string; config?: Descriptor };
  const out: InspectedImage = { name: s.name, tag: s.tag, digest: found.digest, mediaType: found.mediaType, size: found.size, manifest };
  if (!INDEX_MEDIA_TYPES.has(manifest.mediaType ?? found.mediaType) && manifest.config) {
    out.config = JSON.parse(await readFile(blobPath(root, manifest.config.digest), 'utf8')) as ImageConfig;
  }
  return out;
}

export interface RemoveResult {
  untagged: StoreName[];
  /** Blobs deleted because no remaining image needs them. */
  deleted: { digest: string; size: number }[];
}

/**
 * Untags every `name:tag` (all must exist: ERR_NOT_FOUND naming the first missing one, and
 * nothing is removed), then deletes the blobs no remaining image references.
 */
export async function removeImages(root: string, names: StoreName[], opts: { signal?: AbortSignal } = {}): Promise<RemoveResult> {
  return withStoreLock(root, async () => {
    const index = await readIndex(root);
    const full = new Set(names.map((n) => `${n.name}:${n.tag}`));
    for (const n of names) {
      if (!index.manifests.some((d) => d.annotations?.[ANNOTATION_IMAGE_NAME] === `${n.name}:${n.tag}`)) {
        throw new AgentError('ERR_NOT_FOUND', `image "${n.name}:${n.tag}" is not in store "${root}"`);
      }
    }
    index.manifests = index.manifests.filter((d) => !full.has(d.annotations?.[ANNOTATION_IMAGE_NAME] ?? ''));
    await writeIndex(root, index);
    const deleted = await collectGarbage(root, index.manifests, opts.signal);
    return { untagged: names, deleted };
  }, opts);
}

/** Deletes blobs unreachable from `roots`. Call with the store lock held. */
async function collectGarbage(root: string, roots: Descriptor[], signal?: AbortSignal): Promise<{ digest: string; size: number }[]> {
  const keep = new Set<string>();
  const mark = async (d: Descriptor | undefined): Promise<void> => {
    if (!d || typeof d.digest !== 'string' || keep.has(d.digest)) return;
    keep.add(d.digest);
    if (!/json$/.test(d.mediaType ?? '')) return; // layers and other blobs reference nothing
    let doc: { config?: Descriptor; layers?: Descriptor[]; manifests?: Descriptor[] };
    try {
      doc = JSON.parse(await readFile(blobPath(root, d.digest), 'utf8')) as typeof doc;
    } catch {
      return; // a missing or unreadable document references nothing we could keep
    }
    await mark(doc.config);
    for (const l of doc.layers ?? []) await mark(l);
    for (const m of doc.manifests ?? []) await mark(m);
  };
  for (const d of roots) await mark(d);

  const dir = join(root, 'blobs', 'sha256');
  const deleted: { digest: string; size: number }[] = [];
  for (const name of await readdir(dir)) {
    signal?.throwIfAborted();
    const path = join(dir, name);
    if (/^[a-f0-9]{64}$/.test(name)) {
      if (keep.has(`sha256:${name}`)) continue;
      const size = (await stat(path)).size;
      await rm(path, { force: true });
      deleted.push({ digest: `sha256:${name}`, size });
    } else if (name.includes('.tmp-')) {
      await rm(path, { force: true }); // an interrupted blob write (writers hold the lock)
    }
  }
  for (const name of await readdir(root)) {
    if (name.startsWith(IMPORT_STAGING_PREFIX)) await rm(join(root, name), { recursive: true, force: true });
  }
  return deleted.sort((a, b) => (a.digest < b.digest ? -1 : 1));
}
