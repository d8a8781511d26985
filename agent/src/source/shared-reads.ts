/**
 * Concurrent reads of one API object share one GET (a singleflight). A burst of pod starts reads
 * the same `kube-root-ca.crt` ConfigMap for every pod's kube-api-access volume; without this,
 * each pod adds a GET to the API server on the critical path before its sandbox.
 *
 *   read(key) ──no GET in flight for key──▶ start one (bounded by its own deadline, given by the caller)
 *             └─one in flight─────────────▶ share its answer
 *   every caller waits with its own signal: an abort ends that caller's wait, never the shared GET
 *
 * Used for ConfigMaps and Secrets read by GET (strategy Get, or objects no watch covers;
 * watched-objects.ts). A caller that joins gets an answer read after the GET was sent, which may
 * be a moment before its own call; a watch's cache can be staler than that, and the next sync
 * reads again. Nothing is kept once the GET has settled.
 */
import { abortError } from '@nodelet/base';

export class SharedReads {
  readonly #inflight = new Map<string, Promise<unknown>>();

  /** `read` is started without `signal` (others may share it); `signal` only ends this caller's wait. */
  read<T>(key: string, read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError(signal.reason));
    let p = this.#inflight.get(key) as Promise<T> | undefined;
    if (!p) {
      p = read();
      this.#inflight.set(key, p);
      const done = (): void => {
        if (this.#inflight.get(key) === p) this.#inflight.delete(key);
      };
      p.then(done, done);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  /** GETs in flight (tests). */
  get size(): number {
    return this.#inflight.size;
  }
}
