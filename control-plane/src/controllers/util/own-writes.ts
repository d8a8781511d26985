/**
 * A controller's own writes, remembered until its informer delivers them. A controller that
 * writes an object's status and reconciles it again before the watch event of that write arrives
 * (a burst of pod events re-queues a ReplicaSet many times a second) would PUT at the informer's
 * now stale resourceVersion: a certain 409, a re-queue with backoff and a second PUT. Reading
 * through {@link OwnWrites.latest} starts from what the write returned instead.
 */
import type { KubeObject } from '@nodelet/api';

interface Written<T> {
  /** The informer's resourceVersion the write was made over. */
  over: string;
  result: T;
}

export class OwnWrites<T extends KubeObject> {
  readonly #written = new Map<string, Written<T>>();

  /**
   * The object to reconcile `key` from: what this controller last wrote when the informer still
   * shows the version that write replaced, else the informer's `cached` (anyone else's change
   * shows as another version there, and wins). Undefined `cached` (deleted) forgets the key.
   */
  latest(key: string, cached: T | undefined): T | undefined {
    const w = this.#written.get(key);
    if (!cached || (w && w.over !== cached.metadata.resourceVersion)) this.#written.delete(key);
    else if (w) return w.result;
    return cached;
  }

  /** Records the object a write of `key` returned; `cached` is the informer's copy it was made over. */
  wrote(key: string, cached: T, result: T): void {
    // Over our own earlier write the informer's version is still the older one: keep that.
    const over = this.#written.get(key)?.over ?? cached.metadata.resourceVersion;
    if (over !== undefined) this.#written.set(key, { over, result });
  }
}
