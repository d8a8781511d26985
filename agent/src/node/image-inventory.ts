/**
 * The node's image list, read from CRI ListImages and kept for the node status (kubelet's image
 * cache, refreshed every 30 s by the image GC manager):
 *
 *   run():      ListImages at once, then every 30 s after the previous read ends
 *   trigger():  read again now (after a pull, after image GC removed something); coalesced
 *   a read whose list differs, as status.images would show it, from the one before
 *               → onChange() (the reporter computes a status now instead of at its next period)
 *
 * Reads never overlap (one periodic job). A failed read keeps the last list, as kubelet does, and
 * is logged; the next period tries again.
 */
import { describeError, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import type { ImageService } from '../kubecontainer/cri.js';
import { nodeStatusImages, type ListedImage } from './node-images.js';

/** kubelet's image cache refresh period. */
export const IMAGE_LIST_PERIOD_MS = 30_000;
/** A read's deadline: a runtime that hangs must not hold back the next read for the RPC's 2 min default. */
const READ_TIMEOUT_MS = 30_000;

export interface ImageInventoryOptions {
  images: Pick<ImageService, 'listImages'>;
  clock: Clock;
  log: Logger;
  /** Called after a read that changed the list (not after one that found it as it was). */
  onChange?(): void;
  periodMs?: number;
}

export class ImageInventory {
  readonly #o: ImageInventoryOptions;
  #images: readonly ListedImage[] = [];
  /** The list as status.images would report it uncapped: the comparison is order-free and ignores what the status never shows. */
  #key = '[]';
  #job?: PeriodicJob;

  constructor(o: ImageInventoryOptions) {
    this.#o = o;
  }

  /** The last list read (empty until the first read). */
  get current(): readonly ListedImage[] {
    return this.#images;
  }

  /** One read. Public for tests; `run()` schedules it. */
  async refresh(signal: AbortSignal): Promise<void> {
    const { images } = await this.#o.images.listImages({}, { signal, timeoutMs: READ_TIMEOUT_MS });
    const key = JSON.stringify(nodeStatusImages(images, -1));
    this.#images = images;
    if (key === this.#key) return;
    this.#key = key;
    this.#o.onChange?.();
  }

  /** Reads the list again as soon as possible (an image was pulled or removed). Before `run()` there is nothing to do: its first read is at once. */
  trigger(): void {
    this.#job?.trigger();
  }

  /** Reads at once, then every period, until `signal` aborts. Resolves when stopped (no read in flight). */
  async run(signal: AbortSignal): Promise<void> {
    const job = this.#o.clock.every(this.#o.periodMs ?? IMAGE_LIST_PERIOD_MS, (s) => this.refresh(s), {
      signal,
      immediate: true,
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Image list update failed'),
    });
    this.#job = job;
    await job.stopped;
  }
}
