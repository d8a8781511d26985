/**
 * Garbage collection of what the runtime keeps (kubelet kuberuntime_gc.go,
 * images/image_gc_manager.go), run by housekeeping.ts on its schedule:
 *
 *   containers  dead containers and sandboxes (gc-plan.ts rules, carried out by runtime-gc.ts)
 *   images      above imageGCHighThresholdPercent of the image filesystem, remove unused images
 *               down to the low threshold: least recently used first (then first seen), never
 *               one first seen less than imageMinimumGCAge ago, never the sandbox image
 *   cni         CNI GC of cached attachments whose sandbox no longer exists
 */
import { statfs } from 'node:fs/promises';
import { describeError, hasCode, type Logger } from '@nodelet/base';
import type { CniService } from '@nodelet/cni';
import type { ImageService, RuntimeService } from '../kubecontainer/cri.js';
import type { Pleg } from '../pleg/pleg.js';
import { RuntimeGc, type RuntimeGcOptions } from './runtime-gc.js';

export interface GcOptions {
  runtime: RuntimeService;
  images: ImageService;
  pleg: Pleg;
  log: Logger;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;
  /** Image refs never removed (the sandbox image). */
  pinnedImages: () => string[];
  now: () => number;
  /** Called after a pass that removed an image: the node's image list has changed (node/image-inventory.ts). */
  onImagesRemoved?(): void;
}

/**
 * When each image was first seen and last seen in use, as kubelet's image GC records them: on each
 * pass (an image that went away is forgotten). This is what orders removal and holds back young images.
 */
export class ImageUsage {
  readonly #seen = new Map<string, { firstSeenMs: number; lastUsedMs: number }>();

  /** Records one pass's image list; `inUse(id, tags)` says whether a container uses the image. */
  observe(images: ReadonlyArray<{ id: string; repoTags: string[] }>, inUse: (img: { id: string; repoTags: string[] }) => boolean, nowMs: number): void {
    const present = new Set<string>();
    for (const img of images) {
      present.add(img.id);
      let r = this.#seen.get(img.id);
      if (!r) this.#seen.set(img.id, (r = { firstSeenMs: nowMs, lastUsedMs: 0 }));
      if (inUse(img)) r.lastUsedMs = nowMs;
    }
    for (const id of this.#seen.keys()) if (!present.has(id)) this.#seen.delete(id);
  }

  /** `ids` old enough to remove (first seen at least `minAgeMs` ago), least recently used first. */
  removable<T extends { id: string }>(imgs: T[], minAgeMs: number, nowMs: number): T[] {
    const rec = (i: T) => this.#seen.get(i.id) ?? { firstSeenMs: nowMs, lastUsedMs: 0 };
    return imgs
      .filter((i) => nowMs - rec(i).firstSeenMs >= minAgeMs)
      .sort((a, b) => rec(a).lastUsedMs - rec(b).lastUsedMs || rec(a).firstSeenMs - rec(b).firstSeenMs);
  }
}

/**
 * Image GC at the thresholds. Returns bytes freed. With `all` (the eviction manager's node-level
 * reclaim, kubelet DeleteUnusedImages) every unused image goes, whatever the thresholds.
 */
export async function collectImages(o: GcOptions, usage: ImageUsage, signal: AbortSignal, all = false): Promise<number> {
  let target = Number.POSITIVE_INFINITY;
  if (!all) {
    const fs = await o.images.imageFsInfo({}, { signal });
    const mount = fs.imageFilesystems[0]?.fsId?.mountpoint;
    if (!mount) return 0;
    const st = await statfs(mount);
    const capacity = st.blocks * st.bsize;
    const used = capacity - st.bavail * st.bsize;
    if (capacity <= 0 || (used * 100) / capacity < o.imageGCHighThresholdPercent) return 0;
    target = used - (capacity * o.imageGCLowThresholdPercent) / 100;
  }
  const inUse = new Set<string>();
  for (const p of o.pleg.all().values()) for (const c of p.containers) inUse.add(c.imageRef).add(c.image);
  const pinned = new Set(o.pinnedImages());
  const list = await o.images.listImages({}, { signal });
  const used = (img: { id: string; repoTags: string[] }): boolean => inUse.has(img.id) || img.repoTags.some((t) => inUse.has(t));
  const now = o.now();
  usage.observe(list.images, used, now);
  const unused = list.images.filter((img) => !used(img) && !img.repoTags.some((t) => pinned.has(t)) && !img.pinned);
  const candidates = usage.removable(unused, o.imageMinimumGCAgeMs, now);
  let freed = 0;
  let removed = 0;
  for (const img of candidates) {
    if (freed >= target) break;
    try {
      await o.images.removeImage({ image: { image: img.id } }, { signal });
      freed += Number(img.size);
      removed++;
      o.log.info({ image: img.repoTags[0] ?? img.id, bytes: Number(img.size) }, 'Image garbage collected');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) o.log.warn({ image: img.id, err: describeError(err) }, 'Image removal failed');
    }
  }
  if (removed > 0) o.onImagesRemoved?.();
  return freed;
}

/** CNI GC: attachments in the CNI cache whose sandbox the runtime no longer has. Returns how many were removed. */
export async function collectCniAttachments(o: { cni?: CniService; pleg: Pleg; log: Logger }, signal: AbortSignal): Promise<number> {
  const net = o.cni?.network();
  if (!o.cni || !net) return 0;
  const live = [...o.pleg.all().values()].flatMap((p) => p.sandboxes).map((s) => ({ containerID: s.id, ifName: 'eth0' }));
  const report = await o.cni.engine.gc(net, { validAttachments: live, signal });
  if (report.deleted.length) o.log.info({ deleted: report.deleted.length }, 'CNI attachments garbage collected');
  return report.deleted.length;
}

/** The three passes bound to one runtime, as housekeeping.ts schedules them. */
export function gcPasses(
  o: GcOptions & { cni?: CniService } & Pick<RuntimeGcOptions, 'events' | 'pod' | 'podGone' | 'policy'>,
): {
  containers(signal: AbortSignal): Promise<unknown>;
  images(signal: AbortSignal): Promise<number>;
  /** Every unused image, for the eviction manager's disk reclaim. */
  unusedImages(signal: AbortSignal): Promise<number>;
  cni(signal: AbortSignal): Promise<number>;
} {
  const usage = new ImageUsage();
  const runtimeGc = new RuntimeGc({ runtime: o.runtime, pleg: o.pleg, log: o.log, events: o.events, pod: o.pod, podGone: o.podGone, now: o.now, ...(o.policy ? { policy: o.policy } : {}) });
  return {
    containers: (signal) => runtimeGc.collect(signal),
    images: (signal) => collectImages(o, usage, signal),
    unusedImages: (signal) => collectImages(o, usage, signal, true),
    cni: (signal) => collectCniAttachments(o, signal),
  };
}
