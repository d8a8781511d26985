/**
 * WorkQueue: the controller work queue of client-go (`workqueue.RateLimitingInterface`).
 *
 * - An item added while it waits is queued once (dedup); added while it is being processed, it
 *   is queued again after `done()`, never handed to two workers at once.
 * - `addAfter` delays, `addRateLimited` delays by a per-item exponential backoff that
 *   `forget()` resets (call it after a successful sync).
 * - `get()` waits for an item; it resolves `undefined` once the queue is shut down and empty.
 *
 *   add ──▶ queued ──get()──▶ processing ──done()──▶ (gone | queued again if re-added)
 */
import { Backoff, abortError, systemClock, type Clock } from '@nodelet/base';

export interface WorkQueueOptions {
  clock?: Clock;
  /** Per-item backoff for addRateLimited (default 5 ms doubling to 1000 s, as client-go). */
  rateLimit?: { initialMs: number; maxMs: number };
}

export class WorkQueue<T extends string = string> {
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  readonly #queue: T[] = [];
  readonly #dirty = new Set<T>();
  readonly #processing = new Set<T>();
  readonly #requeues = new Map<T, number>();
  readonly #delayed = new Map<T, { at: number; cancel: () => void }>();
  readonly #waiters: Array<(item: T | undefined) => void> = [];
  #shuttingDown = false;
  #handedOut = 0;

  constructor(o: WorkQueueOptions = {}) {
    this.#clock = o.clock ?? systemClock;
    this.#backoff = new Backoff({
      initialMs: o.rateLimit?.initialMs ?? 5,
      maxMs: o.rateLimit?.maxMs ?? 1_000_000,
      // Never forget a failing item's backoff on its own; forget() does that.
      resetAfterMs: Number.POSITIVE_INFINITY,
      clock: this.#clock,
    });
  }

  /** Items waiting (not counting ones in processing or delayed). */
  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Items waiting or being processed now; 0 means no work until something is added (items
   * delayed by addAfter/addRateLimited are not counted: they are work for later).
   */
  get active(): number {
    return this.#queue.length + this.#processing.size;
  }

  /** How many items get() has handed out so far: when it has not changed, no processing started. */
  get handedOut(): number {
    return this.#handedOut;
  }

  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(item);
      this.#processing.add(item);
      this.#handedOut++;
      waiter(item);
    } else {
      this.#queue.push(item);
    }
  }

  /** Adds `item` after `ms`. An earlier pending delay for the same item wins. */
  addAfter(item: T, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const at = this.#clock.monotonic() + ms;
    const pending = this.#delayed.get(item);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    const cancel = this.#clock.setTimer(ms, () => {
      this.#delayed.delete(item);
      this.add(item);
    });
    this.#delayed.set(item, { at, cancel });
  }

  /** Adds `item` after its next backoff delay (5 ms, 10 ms, … per failure). */
  addRateLimited(item: T): void {
    this.#requeues.set(item, (this.#requeues.get(item) ?? 0) + 1);
    this.addAfter(item, this.#backoff.next(item));
  }

  /** Resets the backoff of `item` (after it synced successfully). */
  forget(item: T): void {
    this.#requeues.delete(item);
    this.#backoff.reset(item);
  }

  /** How many times `item` was rate-limited since the last forget(). */
  numRequeues(item: T): number {
    return this.#requeues.get(item) ?? 0;
  }

  /**
   * The next item, marked as processing until `done(item)`. Resolves `undefined` when the
   * queue is shut down and drained; rejects with AbortError when `signal` aborts.
   */
  get(signal?: AbortSignal): Promise<T | undefined> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    const item = this.#queue.shift();
    if (item !== undefined) {
      this.#dirty.delete(item);
      this.#processing.add(item);
      this.#handedOut++;
      return Promise.resolve(item);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(abortError(signal?.reason));
      };
      const waiter = (v: T | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Marks `item` processed; if it was added meanwhile, it is queued again. */
  done(item: T): void {
    if (!this.#processing.delete(item)) return;
    if (this.#dirty.has(item)) {
      this.#dirty.delete(item);
      this.add(item);
    }
  }

  /** Stops accepting items and cancels delayed adds; waiting `get()`s resolve `undefined`. Idempotent. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const d of this.#delayed.values()) d.cancel();
    this.#delayed.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
}
