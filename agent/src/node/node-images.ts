/**
 * `status.images` from the runtime's image list, as kubelet's Images setter (nodestatus/setters.go)
 * and its image cache (images/image_gc_manager.go) build it: largest image first (equal sizes by
 * image ID, descending), at most `nodeStatusMaxImages` of them (-1: all), each named by its repo
 * digests and then its repo tags, at most five names. Pure; the node reporter calls it on every
 * status computation, so the same images always give the same list (status changes are found by
 * comparing it, node-reporter.ts).
 */
import type { ContainerImage } from '@nodelet/api/agent';
import type { CriImage } from '../kubecontainer/cri.js';

/** kubelet's MaxNamesPerImageInNodeStatus. */
export const MAX_NAMES_PER_IMAGE_IN_NODE_STATUS = 5;

/** The fields of a CRI image that status.images reports. */
export type ListedImage = Pick<CriImage, 'id' | 'repoTags' | 'repoDigests' | 'size'>;

/** Size descending, then ID descending (kubelet's ByImageSize), so ties have one order too. */
function bySizeThenId(a: { id: string; bytes: number }, b: { id: string; bytes: number }): number {
  if (a.bytes !== b.bytes) return b.bytes - a.bytes;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * The node's `status.images` for `images` (CRI ListImages, in any order). `maxImages` is
 * `nodeStatusMaxImages`: -1 reports every image, 0 none. Returns a new array; the input is not changed.
 */
export function nodeStatusImages(images: readonly ListedImage[], maxImages: number): ContainerImage[] {
  const sorted = images.map((img) => ({ id: img.id, bytes: Number(img.size), img })).sort(bySizeThenId);
  const kept = maxImages > -1 ? sorted.slice(0, maxImages) : sorted;
  return kept.map(({ bytes, img }) => ({
    names: [...img.repoDigests, ...img.repoTags].slice(0, MAX_NAMES_PER_IMAGE_IN_NODE_STATUS),
    sizeBytes: bytes,
  }));
}
