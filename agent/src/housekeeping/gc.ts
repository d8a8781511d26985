/**
 * Garbage collection of what the runtime keeps (kubelet kuberuntime_gc.go,
 * images/image_gc_manager.go), run by housekeeping.ts on its schedule:
 *
 *   containers  dead containers and sandboxes (gc-plan.ts rules, carried out by runtime-gc.ts)
 *   images      above imageGCHighThresholdPercent of the image filesystem, remove unused images
 *               (oldest first, not the sandbox image) down to the low threshold
 *   cni         CNI GC of cached attachments whose sandbox no longer exists
 */
import { statfs } from 'node:fs/promises';
import { describeError, hasCode, type Logger } from '@nodelet/base';
import type { CniService } from '@nodelet/cni';
import type { ImageService, RuntimeService } from '../runtime/cri.js';
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
}

/** Image GC at the thresholds. Returns bytes freed. */
export async function collectImages(o: GcOptions, signal: AbortSignal): Promise<number> {
  const fs = await o.images.imageFsInfo({}, { signal });
  const mount = fs.imageFilesystems[0]?.fsId?.mountpoint;
  if (!mount) return 0;
  const st = await statfs(mount);
  const capacity = st.blocks * st.bsize;
  const used = capacity - st.bavail * st.bsize;
  if (capacity <= 0 || (used * 100) / capacity < o.imageGCHighThresholdPercent) return 0;
  const target = used - (capacity * o.imageGCLowThresholdPercent) / 100;
  const inUse = new Set<string>();
  for (const p of o.pleg.all().values()) for (const c of p.containers) inUse.add(c.imageRef).add(c.image);
  const pinned = new Set(o.pinnedImages());
  const list = await o.images.listImages({}, { signal });
  const candidates = list.images.filter((img) => !inUse.has(img.id) && !img.repoTags.some((t) => pinned.has(t) || inUse.has(t)) && !img.pinned);
  let freed = 0;
  for (const img of candidates) {
    if (freed >= target) break;
    try {
      await o.images.removeImage({ image: { image: img.id } }, { signal });
      freed += Number(img.size);
      o.log.info({ image: img.repoTags[0] ?? img.id, bytes: Number(img.size) }, 'Image garbage collected');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) o.log.warn({ image: img.id, err: describeError(err) }, 'Image removal failed');
    }
  }
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
): { containers(signal: AbortSignal): Promise<unknown>; images(signal: AbortSignal): Promise<number>; cni(signal: AbortSignal): Promise<number> } {
  const runtimeGc = new RuntimeGc({ runtime: o.runtime, pleg: o.pleg, log: o.log, events: o.events, pod: o.pod, podGone: o.podGone, now: o.now, ...(o.policy ? { policy: o.policy } : {}) });
  return {
    containers: (signal) => runtimeGc.collect(signal),
    images: (signal) => collectImages(o, signal),
    cni: (signal) => collectCniAttachments(o, signal),
  };
}
