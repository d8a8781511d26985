/**
 * Informer<T>: list, then watch from the list's resourceVersion, keeping a local cache keyed
 * `namespace/name` and calling handlers on changes (client-go's Reflector + SharedInformer).
 *
 *   start()
 *     │
 *     ▼
 *   ┌──────┐ ok  ┌───────────────────┐ server ends watch (timeout)  ┐
 *   │ LIST │────▶│ WATCH from lastRV │──────────────────────────────┘ re-watch at once
 *   └──────┘     └───────────────────┘
 *     ▲  │fail      │ 410 Gone / ERROR Expired → relist (synthetic deletes for vanished objects)
 *     │  ▼          │ dropped connection / 5xx → backoff, re-watch from lastRV
 *   backoff ◀───────┘
 *
 * Handlers run synchronously on the informer's loop, in event order; they must not block and
 * must not mutate the objects they get (the cache holds the same references). A throwing
 * handler is logged and does not stop the informer.
 */
import { AgentError, Backoff, hasCode, isAbortError, noopLogger, systemClock, type Clock, type Disposable, type Logger, toDisposable } from '@nodelet/base';
import type { KubeObject, Status } from '../types/meta.js';
import type { ResourceType } from '../types/resources.js';
import type { ApiClient } from '../client/api-client.js';
import { errorFromWatchStatus } from '../client/errors.js';

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** The last known state of the object (after a relist, possibly not its final state). */
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  client: ApiClient;
  resource: ResourceType<T>;
  /** Watch one namespace; unset = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** When set, every `resyncMs` each cached object is re-delivered as `onUpdate(obj, obj)`. */
  resyncMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Backoff after a failed list or a dropped watch (default 800 ms doubling to 30 s, like client-go). */
  backoff?: { initialMs: number; maxMs: number };
  /** Page size of the list (default 500). */
  pageSize?: number;
  /** Server-side watch timeout; default 5–10 min, randomised like client-go so watches don't restart together. */
  watchTimeoutSeconds?: number;
  random?: () => number;
}

const SHORT_WATCH_MS = 1000;

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: Pick<KubeObject, 'metadata'>): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata?.name ?? '');
}

export class Informer<T extends KubeObject> {
  readonly #o: InformerOptions<T>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  readonly #store = new Map<string, T>();
  readonly #handlers = new Set<InformerHandlers<T>>();
  readonly #stop = new AbortController();
  readonly #syncWaiters = new Set<{ resolve(): void; reject(err: unknown): void }>();
  #loop: Promise<void> | undefined;
  #synced = false;
  #lastRV: string | undefined;
  #cancelResync: (() => void) | undefined;
  #closed = false;

  constructor(opts: InformerOptions<T>) {
    this.#o = opts;
    this.#clock = opts.clock ?? systemClock;
    this.#log = (opts.logger ?? noopLogger).child({ component: 'informer', resource: opts.resource.plural });
    this.#backoff = new Backoff({ initialMs: opts.backoff?.initialMs ?? 800, maxMs: opts.backoff?.maxMs ?? 30_000, clock: this.#clock });
  }

  /**
   * Adds handlers. Objects already cached are delivered to `onAdd` first (as client-go does), so a
   * late subscriber sees the same world as an early one. Dispose to remove.
   */
  on(handlers: InformerHandlers<T>): Disposable {
    this.#handlers.add(handlers);
    for (const obj of this.#store.values()) this.#call(handlers, 'onAdd', obj);
    return toDisposable(() => this.#handlers.delete(handlers));
  }

  /** Starts the list/watch loop. Idempotent; a closed informer cannot be restarted. */
  start(): void {
    if (this.#loop || this.#closed) return;
    this.#loop = this.#run(this.#stop.signal);
    this.#scheduleResync();
  }

  /** True once the first list has been delivered to handlers. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves when synced; rejects with AbortError when `signal` aborts or the informer closes first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#closed) return Promise.reject(new DOMException('informer closed before it synced', 'AbortError'));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#syncWaiters.delete(w);
        reject(new DOMException('stopped waiting for informer sync', 'AbortError'));
      };
      const w = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.add(w);
    });
  }

  /** The cached object by key (`ns/name`, or `name` when cluster-scoped). Do not mutate it. */
  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  /** A snapshot of all cached objects. Do not mutate them. */
  list(): T[] {
    return [...this.#store.values()];
  }

  /** What this informer lists and watches (to compare its cache with the server's, as tests do). */
  get scope(): { resource: ResourceType<T>; namespace?: string; labelSelector?: string; fieldSelector?: string } {
    const { resource, namespace, labelSelector, fieldSelector } = this.#o;
    return { resource, namespace, labelSelector, fieldSelector };
  }

  /** The resourceVersion of the last list or event processed. */
  get lastSyncResourceVersion(): string | undefined {
    return this.#lastRV;
  }

  /** Stops the loop and waits for it to end. Idempotent. Handlers are not called afterwards. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#stop.abort();
      this.#cancelResync?.();
      for (const w of this.#syncWaiters) w.reject(new DOMException('informer closed before it synced', 'AbortError'));
      this.#syncWaiters.clear();
    }
    await this.#loop;
  }

  async #run(stop: AbortSignal): Promise<void> {
    let needList = true;
    while (!stop.aborted) {
      try {
        if (needList) {
          await this.#list(stop);
          needList = false;
          this.#backoff.reset();
        }
        const outcome = await this.#watch(stop);
        if (outcome === 'expired') needList = true;
      } catch (err) {
        if (stop.aborted) break;
        // 410 on a watch means our RV is compacted: relist at once. 410 on the list itself
        // (an expired continue token) is retried with backoff so it cannot spin.
        if (hasCode(err, 'ERR_GONE') && !needList) {
          this.#log.info({ rv: this.#lastRV }, 'Watch expired, relisting');
          needList = true;
          continue;
        }
        const delayMs = this.#backoff.next();
        this.#log.warn({ err, delayMs, relist: needList }, needList ? 'List failed, will retry' : 'Watch failed, will re-watch');
        try {
          await this.#clock.sleep(delayMs, stop);
        } catch (e) {
          if (isAbortError(e)) break;
          throw e;
        }
      }
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    const list = await o.client.listAll(o.resource, {
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      limit: o.pageSize ?? 500,
      signal,
    });
    if (signal.aborted) return;
    this.#replace(list.items);
    this.#lastRV = list.metadata.resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters) w.resolve();
      this.#syncWaiters.clear();
    }
  }

  /** Applies a full list: adds, updates (only when the RV changed) and synthetic deletes. */
  #replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#store.get(key);
      this.#store.set(key, obj);
      if (!old) this.#emit('onAdd', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit('onUpdate', old, obj);
    }
    for (const [key, old] of [...this.#store]) {
      if (seen.has(key)) continue;
      this.#store.delete(key);
      this.#emit('onDelete', old);
    }
  }

  /** One watch; returns 'expired' when a relist is needed, 'ended' when the server closed it. */
  async #watch(signal: AbortSignal): Promise<'expired' | 'ended'> {
    const o = this.#o;
    const random = o.random ?? Math.random;
    const events = o.client.watch(o.resource, {
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      resourceVersion: this.#lastRV,
      allowWatchBookmarks: true,
      timeoutSeconds: o.watchTimeoutSeconds ?? Math.floor(300 * (1 + random())),
      signal,
    });
    const startedAt = this.#clock.monotonic();
    let received = 0;
    for await (const e of events) {
      if (signal.aborted) break;
      received++;
      if (e.type === 'ERROR') {
        const status: Status = e.object;
        if (status.code === 410) return 'expired';
        throw errorFromWatchStatus(status, `watch ${o.resource.plural}`);
      }
      const obj = e.object;
      const rv = obj.metadata?.resourceVersion;
      if (e.type !== 'BOOKMARK') {
        const key = objectKey(obj);
        const old = this.#store.get(key);
        if (e.type === 'DELETED') {
          this.#store.delete(key);
          this.#emit('onDelete', obj);
        } else {
          this.#store.set(key, obj);
          if (old) this.#emit('onUpdate', old, obj);
          else this.#emit('onAdd', obj);
        }
      }
      if (rv) this.#lastRV = rv;
      this.#backoff.reset();
    }
    // A watch the server closes at once, again and again, must not become a hot loop.
    if (!signal.aborted && received === 0 && this.#clock.monotonic() - startedAt < SHORT_WATCH_MS) {
      throw new AgentError('ERR_UNAVAILABLE', `watch ${o.resource.plural}: API server closed the watch immediately`);
    }
    return 'ended';
  }

  #scheduleResync(): void {
    const ms = this.#o.resyncMs;
    if (!ms || this.#closed) return;
    this.#cancelResync = this.#clock.setTimer(ms, () => {
      if (this.#closed) return;
      for (const obj of this.#store.values()) this.#emit('onUpdate', obj, obj);
      this.#scheduleResync();
    });
  }

  #emit(kind: 'onAdd' | 'onDelete', obj: T): void;
  #emit(kind: 'onUpdate', oldObj: T, newObj: T): void;
  #emit(kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    if (this.#closed) return;
    for (const h of this.#handlers) this.#call(h, kind, a, b);
  }

  #call(h: InformerHandlers<T>, kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    try {
      if (kind === 'onUpdate') h.onUpdate?.(a, b as T);
      else h[kind]?.(a);
    } catch (err) {
      this.#log.error({ err, handler: kind, key: objectKey(a) }, 'Informer handler threw');
    }
  }
}
