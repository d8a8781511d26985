/**
 * Lists what a registry serves through its read API (`/v2/_catalog`, `tags/list`, manifests):
 * used by `nodelet image ls --registry` to check what a node would pull. Works with our
 * registry and any registry that implements the catalog endpoint without auth.
 */
import { AgentError } from '@nodelet/base';
import type { StoredImage } from './layout.js';

export interface RegistryImage extends StoredImage {
  /** Manifest + config + layer bytes, from the manifest's descriptors. */
  contentSize: number;
}

/** `base` is `http://host:port` (or `host:port`, then http). */
export async function listRegistryImages(base: string, opts: { signal?: AbortSignal } = {}): Promise<RegistryImage[]> {
  const root = /^https?:\/\//.test(base) ? base.replace(/\/+$/, '') : `http://${base}`;
  const get = async (path: string, accept?: string): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(root + path, { signal: opts.signal, headers: accept ? { Accept: accept } : {} });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new AgentError('ERR_UNAVAILABLE', `registry ${root} is unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (!res.ok) {
      const body = await res.text();
      throw new AgentError(res.status === 404 ? 'ERR_NOT_FOUND' : 'ERR_UNAVAILABLE', `registry ${root}${path}: HTTP ${res.status} ${body.slice(0, 200)}`);
    }
    return res;
  };
  const { repositories } = (await (await get('/v2/_catalog')).json()) as { repositories?: string[] };
  const out: RegistryImage[] = [];
  for (const name of repositories ?? []) {
    const { tags } = (await (await get(`/v2/${name}/tags/list`)).json()) as { tags?: string[] | null };
    for (const tag of tags ?? []) {
      const res = await get(`/v2/${name}/manifests/${tag}`, 'application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json');
      const text = await res.text();
      const m = JSON.parse(text) as { config?: { size: number }; layers?: { size: number }[] };
      out.push({
        name,
        tag,
        digest: res.headers.get('docker-content-digest') ?? '',
        mediaType: (res.headers.get('content-type') ?? '').split(';')[0]!,
        size: Buffer.byteLength(text),
        contentSize: Buffer.byteLength(text) + (m.config?.size ?? 0) + (m.layers ?? []).reduce((a, l) => a + l.size, 0),
      });
    }
  }
  return out.sort((a, b) => (a.name === b.name ? (a.tag < b.tag ? -1 : 1) : a.name < b.name ? -1 : 1));
}
