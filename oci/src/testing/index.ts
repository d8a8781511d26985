/**
 * Test helpers of @nodelet/oci (source-only, not built).
 *
 *   const reg = await startTestRegistry();          // lab images from build/images, 127.0.0.1:0
 *   t.after(() => reg.close());
 *   await fetch(`${reg.url}/v2/busybox/manifests/latest`);
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LAB_IMAGE_DIR, ensureLabImages, LAB_IMAGES } from '../lab-images.js';
import { initStore, putBlob, tagImage } from '../layout.js';
import { MediaType } from '../media-types.js';
import { type Registry, startRegistry } from '../registry.js';

export interface TestRegistry extends Registry {
  /** The image store it serves. */
  store: string;
  /** Full references through this registry. */
  images: { pause: string; busybox: string };
}

/** A registry on 127.0.0.1:0 serving the lab images (built once into build/images). */
export async function startTestRegistry(opts: { signal?: AbortSignal } = {}): Promise<TestRegistry> {
  const labs = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR, { signal: opts.signal });
  const reg = await startRegistry({ root: labs.dir, signal: opts.signal });
  return {
    ...reg,
    store: labs.dir,
    images: {
      pause: `${reg.hostPort}/${LAB_IMAGES.pause.name}:${LAB_IMAGES.pause.tag}`,
      busybox: `${reg.hostPort}/${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`,
    },
  };
}

/**
 * A throw-away store holding one tiny image `name:tag` whose single layer is `layer` (not a
 * valid tar: for registry/metadata tests that never unpack it). Remove `dir` when done.
 */
export async function tinyImageStore(name = 'test/tiny', tag = 'v1', layer: string | Uint8Array = 'layer bytes'): Promise<{ dir: string; manifestDigest: string; layerDigest: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-tiny-store-'));
  await initStore(dir);
  const l = await putBlob(dir, layer);
  const c = await putBlob(dir, JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [l.digest] } }));
  const m = await putBlob(
    dir,
    JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: MediaType.ociConfig, ...c }, layers: [{ mediaType: MediaType.ociLayer, ...l }] }),
  );
  await tagImage(dir, name, tag, { mediaType: MediaType.ociManifest, ...m });
  return { dir, manifestDigest: m.digest, layerDigest: l.digest, remove: () => rm(dir, { recursive: true, force: true }) };
}
export * from './archives.js';
