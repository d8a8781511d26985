/**
 * `GET /nodelet/registry/catalog`: the images the registry this server runs can serve, as the
 * references a node pulls them by (`<registry host:port>/<name>:<tag>`), for the console's create
 * form (docs/console.md, "The image list"). A non-resource URL, so RBAC decides who may read it:
 * cluster-admin's `*`, or a ClusterRole granting `get` on it; no default role grants it to anyone
 * else. The registry itself answers its `/v2/_catalog` without credentials on its own address
 * (docs/images.md); on the API's port the same names need a user RBAC allows.
 */
import type { ServerResponse } from 'node:http';
import { listImages, pullReferenceOf } from '@nodelet/oci';
import { sendJson } from './respond.js';
import { StatusError } from './status.js';

export const IMAGE_CATALOGUE_PATH = '/nodelet/registry/catalog';

/** The registry this server runs: the address nodes pull from and the image store it serves. */
export interface ImageCatalogueSource {
  /** `host:port`, as image references name it. */
  registry: string;
  /** The OCI image store (layout directory) it serves. */
  root: string;
}

/** The endpoint's body. */
export interface ImageCatalogue {
  registry: string;
  /** Pull references, sorted by name then tag. */
  images: string[];
}

/**
 * Answers with the store's images read now (an image built or imported into the store shows at
 * once); 404 when this server runs no registry (`--registry-address ''`, or its store missing).
 */
export async function serveImageCatalogue(source: ImageCatalogueSource | undefined, res: ServerResponse): Promise<void> {
  if (!source) throw new StatusError(404, 'NotFound', 'this server runs no image registry', {});
  const body: ImageCatalogue = { registry: source.registry, images: (await listImages(source.root)).map((i) => pullReferenceOf(source.registry, i)) };
  sendJson(res, 200, body);
}
