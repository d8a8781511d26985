/**
 * Runs async tasks one at a time per key (and concurrently across keys), like VS Code's
 * SequencerByKey. Used so that two operations on one attachment or pod never overlap.
 */
export class KeyedSerializer {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => undefined); // the caller gets the failure from next; the chain only waits for it
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }

  /** Number of keys with queued or running work (for leak checks in tests). */
  get size(): number {
    return this.#tails.size;
  }
}

/** Bounds concurrency of async work (image pulls, CRI calls) on the shared event loop. */
export class Semaphore {
  #available: number;
  readonly #waiters: Array<() => void> = [];

  constructor(permits: number) {
    if (!(permits >= 1)) throw new RangeError('permits must be >= 1');
    this.#available = permits;
  }

  /**
   * Runs `task` once a permit is free. An abort of `signal` while waiting leaves the queue at once
   * and rejects with the abort reason (a deleted pod must not wait for every pull ahead of it);
   * once the task runs, the signal is the task's own business.
   */
  async use<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#available > 0) {
      this.#available--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #release(): void {
    const w = this.#waiters.shift();
    if (w) w();
    else this.#available++;
  }
}
