/**
 * Runs async tasks one at a time per key (and concurrently across keys), like VS Code's
 * SequencerByKey. Used so that two operations on one attachment or pod never overlap.
 */
export class KeyedSerializer {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => undefined);
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

  async use<T>(task: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#available > 0) {
      this.#available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #release(): void {
    const w = this.#waiters.shift();
    if (w) w();
    else this.#available++;
  }
}
