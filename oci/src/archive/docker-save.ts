/**
 * The images of a `docker save` archive: `manifest.json` lists, per image, the config file,
 * the layer files bottom-up and `RepoTags`. Layers are found by path (legacy archives name them
 * `<id>/layer.tar` and may make a repeated layer a symlink to another; Docker 25+ uses
 * `blobs/sha256/<hex>`). Each layer must unpack to the config's diff_id; the config's file name,
 * when it is a digest, must match. The importer then writes a new OCI manifest for the image:
 *
 *   { schemaVersion: 2, mediaType: oci manifest,
 *     config: { oci config, digest, size },
 *     layers: [ { oci layer (tar | tar+gzip | tar+zstd, from the bytes), digest, size }, … ] }
 *
 * The `repositories` file repeats RepoTags for old Docker releases and is not read.
 */
import { sha256Digest } from '../digest.js';
import { type Descriptor, type ImageConfig, type ImageManifest, MediaType } from '../media-types.js';
import { storeNameOf } from '../store-name.js';
import type { ArchiveContents } from './read-archive.js';
import { type ArchiveImage, compressionOf, corrupt, lookupPath, parseDoc, readJson, verifyDiffId } from './verify.js';

interface DockerSaveEntry {
  Config?: unknown;
  RepoTags?: unknown;
  Layers?: unknown;
}

const LAYER_TYPE = { tar: MediaType.ociLayer, gzip: MediaType.ociLayerGzip, zstd: MediaType.ociLayerZstd } as const;
const DIGEST_NAMED = /(?:^|\/)([a-f0-9]{64})(?:\.json)?$/;

/** Verifies and lists the images of a docker save archive (`c.docs` holds `manifest.json`). */
export async function planDockerSave(c: ArchiveContents, signal?: AbortSignal): Promise<ArchiveImage[]> {
  const list = parseDoc<unknown>(c.docs.get('manifest.json')!, 'manifest.json');
  if (!Array.isArray(list)) throw corrupt('manifest.json is not a list of images');
  const images = new Map<string, ArchiveImage>();
  for (const [i, e] of (list as DockerSaveEntry[]).entries()) {
    const what = `image ${i} of manifest.json`;
    if (typeof e?.Config !== 'string' || !Array.isArray(e.Layers) || !e.Layers.every((l) => typeof l === 'string')) {
      throw corrupt(`${what} needs a "Config" path and a "Layers" list of paths`);
    }
    const configFile = lookupPath(c, e.Config);
    if (!configFile) throw corrupt(`${what}: its config "${e.Config}" is not in the archive`);
    const named = DIGEST_NAMED.exec(e.Config);
    if (named && configFile.digest !== `sha256:${named[1]}`) throw corrupt(`${what}: its config "${e.Config}" hashes to ${configFile.digest}, not to its name`);
    const { value: config } = await readJson<Partial<ImageConfig>>(configFile, `the config of ${what}`);
    const diffIds = config.rootfs?.diff_ids;
    const paths = e.Layers as string[];
    if (!Array.isArray(diffIds) || diffIds.length !== paths.length) {
      throw corrupt(`the config of ${what} lists ${Array.isArray(diffIds) ? diffIds.length : 'no'} diff_ids for ${paths.length} layers`);
    }
    const layers: Descriptor[] = [];
    for (const [j, path] of paths.entries()) {
      const lw = `layer "${path}" of ${what}`;
      const f = lookupPath(c, path);
      if (!f) throw corrupt(`${lw} is not in the archive`);
      const compression = compressionOf(f.head);
      await verifyDiffId(f, compression, diffIds[j], lw, signal);
      layers.push({ mediaType: LAYER_TYPE[compression], digest: f.digest, size: f.size });
    }
    const manifest: ImageManifest = {
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: MediaType.ociConfig, digest: configFile.digest, size: configFile.size },
      layers,
    };
    const body = Buffer.from(JSON.stringify(manifest));
    const digest = sha256Digest(body);
    const names = (Array.isArray(e.RepoTags) ? e.RepoTags : []).map((t: unknown) => {
      try {
        return storeNameOf(String(t));
      } catch (err) {
        throw corrupt(`${what} has the tag "${String(t)}", which is not a tagged image reference (${(err as Error).message})`);
      }
    });
    const have = images.get(digest);
    if (have) have.names.push(...names);
    else images.set(digest, { names, manifest: { mediaType: MediaType.ociManifest, digest, size: body.length }, manifestBody: body, blobs: [configFile.digest, ...layers.map((l) => l.digest)] });
  }
  return [...images.values()];
}
