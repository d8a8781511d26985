/**
 * The fake runtime's image store: references normalised as containerd normalises them, IDs that are
 * stable per reference (as a content digest is), lookup by ID, tag, digest or unique ID prefix.
 */
import { createHash } from 'node:crypto';
import type * as p from '@nodelet/proto';
import { byIdOrPrefix, fakeRuntimeError } from './errors.js';

/** An image in the store. `size` in bytes. */
export interface FakeImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  pinned?: boolean;
}

/** docker.io/library defaults and :latest, as containerd normalises references. */
export function normalizeRef(ref: string): string {
  if (ref.startsWith('sha256:')) return ref;
  let name = ref;
  const at = name.indexOf('@');
  const digest = at >= 0 ? name.slice(at) : '';
  if (at >= 0) name = name.slice(0, at);
  const slash = name.indexOf('/');
  const first = slash >= 0 ? name.slice(0, slash) : '';
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) name = `docker.io/${slash >= 0 ? '' : 'library/'}${name}`;
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  if (!digest && !lastPart.includes(':')) name += ':latest';
  return name + digest;
}

/** The ID an image reference resolves to; an image ID (`sha256:…`) is its own. */
export function imageIdFor(ref: string): string {
  if (ref.startsWith('sha256:')) return ref;
  return `sha256:${createHash('sha256').update(normalizeRef(ref)).digest('hex')}`;
}

/** The CRI view of an image. */
export function imageView(img: FakeImage): p.Image__Output {
  return { id: img.id, repoTags: img.repoTags, repoDigests: img.repoDigests, size: String(img.size), uid: null, username: '', spec: null, pinned: img.pinned ?? false };
}

export class FakeImageStore {
  readonly images = new Map<string, FakeImage>();

  /**
   * `anyPresent`: every reference resolves, as if pulled before (the hollow node's runtime, where
   * only pull policy Always pulls). A looked-up image is stored once, so the store grows per image,
   * never per pod.
   */
  constructor(readonly anyPresent = false) {}

  /** Puts an image in the store (a second tag for the same ID is added to it). */
  addImage(ref: string, size = 1_000_000): FakeImage {
    const id = imageIdFor(ref);
    const existing = this.images.get(id);
    const tag = normalizeRef(ref);
    const named = !tag.startsWith('sha256:') && !tag.includes('@');
    if (existing) {
      if (named && !existing.repoTags.includes(tag)) existing.repoTags.push(tag);
      return existing;
    }
    const img: FakeImage = { id, repoTags: named ? [tag] : [], repoDigests: tag.startsWith('sha256:') ? [] : [`${tag.split(':')[0]}@${id}`], size };
    this.images.set(id, img);
    return img;
  }

  /** The image a reference, ID or unique ID prefix names; undefined when absent. */
  findImage(ref: string | undefined): FakeImage | undefined {
    if (!ref) return undefined;
    const norm = normalizeRef(ref);
    for (const img of this.images.values()) {
      if (img.id === ref || img.repoTags.includes(norm) || img.repoDigests.includes(norm)) return img;
    }
    if (/^[0-9a-f]{6,}$/.test(ref) || ref.startsWith('sha256:')) {
      const key = ref.startsWith('sha256:') ? ref : `sha256:${ref}`;
      const hit = byIdOrPrefix(this.images, key, 'image', 'ImageStatus');
      if (hit) return hit;
    }
    return this.anyPresent ? this.addImage(ref) : undefined;
  }

  /** PullImage: the reference must parse; the image is then present. Returns its ID. */
  pullImage(ref: string): string {
    if (!ref || /\s/.test(ref) || /[A-Z]/.test(ref.split('@')[0]?.split('/').slice(0, -1).join('/') ?? '')) {
      throw fakeRuntimeError('PullImage', 'UNKNOWN', `failed to pull and unpack image "${ref}": invalid reference format`);
    }
    return this.addImage(ref).id;
  }

  /** RemoveImage: idempotent, as containerd's is. */
  removeImage(ref: string | undefined): void {
    const img = this.findImage(ref);
    if (img) this.images.delete(img.id);
  }

  listImages(filterRef?: string): p.Image__Output[] {
    const want = filterRef ? this.findImage(filterRef) : undefined;
    if (filterRef && !want) return [];
    return [...this.images.values()].filter((img) => !want || img === want).map(imageView);
  }

  /** Bytes the images take (ImageFsInfo). */
  usedBytes(): number {
    let used = 0;
    for (const img of this.images.values()) used += img.size;
    return used;
  }
}
