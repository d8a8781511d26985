/**
 * An in-memory copy of every object of one resource, kept current from the resource's watch
 * cache: what the authorizers read on every request (RBAC roles and bindings) instead of the
 * store. Consistency is that of an informer, plus {@link ResourceMirror.waitForRevision} so a
 * writer can wait until its own write is visible (the API server does this after RBAC writes,
 * so `kubectl create rolebinding …` is in force when kubectl returns).
 *
 *   start ─▶ list (revision R) ─▶ subscribe(R) ─▶ events ─▶ map + revision
 *                 ▲                                 │ watch lost / cache cannot serve R
 *                 └──────────── relist after backoff ◀┘
 */
import { delay, describeError, isAbortError, type Logger } from '@nodelet/base';
import type { ServedResource, ServerContext } from './context.js';
import { MATCH_ALL } from './filter.js';
import type { ApiObject } from './object.js';
import type { Subscription } from './watch-cache.js';

const RELIST_BACKOFF_MS = [100, 500, 1000, 2000, 5000];

export class ResourceMirror {
  readonly #served: ServedResource;
  readonly #log: Logger;
  readonly #stop: AbortSignal;
  /** namespace ('' for cluster-scoped) → name → object */
  #byNamespace = new Map<string, Map<string, ApiObject>>();
  #revision = 0;
  #sub?: Subscription;
  #synced?: Promise<void>;
  #waiters = new Set<{ revision: number; resolve: () => void }>();
  #listeners = new Set<() => void>();

  constructor(o: { served: ServedResource; logger: Logger; stop: AbortSignal }) {
    this.#served = o.served;
    this.#log = o.logger;
    this.#stop = o.stop;
    o.stop.addEventListener('abort', () => this.#close(), { once: true });
  }

  /** Starts mirroring; resolves after the first list. Idempotent. */
  start(): Promise<void> {
    this.#synced ??= this.#sync(0);
    return this.#synced;
  }

  get revision(): number {
    return this.#revision;
  }

  get(namespace: string | undefined, name: string): ApiObject | undefined {
    return this.#byNamespace.get(namespace ?? '')?.get(name);
  }

  /** Objects of one namespace (cluster-scoped resources: pass undefined). */
  *inNamespace(namespace: string | undefined): IterableIterator<ApiObject> {
    yield* this.#byNamespace.get(namespace ?? '')?.values() ?? [];
  }

  *all(): IterableIterator<ApiObject> {
    for (const m of this.#byNamespace.values()) yield* m.values();
  }

  /** Calls `fn` after every change (coalescing is the caller's business). Returns an unsubscribe. */
  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Resolves once the mirror has applied `revision` (or `timeoutMs` passed; false then). */
  async waitForRevision(revision: number, timeoutMs = 5000): Promise<boolean> {
    if (this.#revision >= revision) return true;
    let waiter!: { revision: number; resolve: () => void };
    const seen = new Promise<void>((resolve) => (waiter = { revision, resolve }));
    this.#waiters.add(waiter);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([seen.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
      this.#waiters.delete(waiter);
    }
  }

  async #sync(attempt: number): Promise<void> {
    for (let i = attempt; !this.#stop.aborted; i++) {
      try {
        const page = await this.#served.registry.list({ filter: MATCH_ALL });
        const fresh = new Map<string, Map<string, ApiObject>>();
        for (const o of page.items) this.#put(fresh, o);
        this.#byNamespace = fresh;
        const rev = Number(page.resourceVersion);
        this.#advance(rev);
        this.#notify();
        const sub = await this.#served.cache.subscribe(rev, {
          onEvent: (e) => {
            if (e.kind === 'delete') this.#byNamespace.get(e.object.metadata.namespace ?? '')?.delete(e.object.metadata.name!);
            else this.#put(this.#byNamespace, e.object);
            this.#advance(e.revision);
            this.#notify();
          },
          onEnd: (err) => {
            this.#sub = undefined;
            if (this.#stop.aborted) return;
            this.#log.warn({ resource: this.#served.def.plural, err: describeError(err) }, 'Mirror lost its watch, relisting');
            void this.#sync(1);
          },
        });
        if (sub) {
          this.#sub = sub;
          return;
        }
        // The cache started after our list: list again at a newer revision.
      } catch (err) {
        if (this.#stop.aborted) return;
        this.#log.warn({ resource: this.#served.def.plural, err: describeError(err) }, 'Mirror list failed, retrying');
      }
      try {
        await delay(RELIST_BACKOFF_MS[Math.min(i, RELIST_BACKOFF_MS.length - 1)]!, this.#stop);
      } catch (err) {
        if (isAbortError(err)) return;
        throw err;
      }
    }
  }

  #put(into: Map<string, Map<string, ApiObject>>, o: ApiObject): void {
    const ns = o.metadata.namespace ?? '';
    let m = into.get(ns);
    if (!m) into.set(ns, (m = new Map()));
    m.set(o.metadata.name!, o);
  }

  #advance(revision: number): void {
    if (revision > this.#revision) this.#revision = revision;
    for (const w of this.#waiters) if (w.revision <= this.#revision) w.resolve();
  }

  #notify(): void {
    for (const fn of this.#listeners) fn();
  }

  #close(): void {
    this.#sub?.close();
    this.#sub = undefined;
  }
}

/**
 * One object of `served`, from its mirror when the server keeps one and it holds the object,
 * else from the store (a miss may be an object created a moment ago, before the mirror saw it).
 * Read-only: the result may be the mirror's own copy.
 */
export async function findMirrored(ctx: ServerContext, served: ServedResource, namespace: string | undefined, name: string): Promise<ApiObject | undefined> {
  return ctx.mirrorOf?.(served.def)?.get(namespace, name) ?? served.registry.find(namespace, name);
}

/**
 * One object for a check the server makes itself (token requests, NodeRestriction, a
 * service-account token's bound objects), read as upstream's admission plugins and token getters
 * read their listers: the in-memory copy when the server mirrors the kind (for read-your-writes,
 * {@link ServerContext.mirrorOf}, or for lookups only, {@link ServerContext.lookupMirrorOf}) and
 * `fits` accepts it, else the store's object. A miss or a copy that fails the check may be the
 * mirror a watch delivery behind the store, so the store has the last word on a refusal; on etcd
 * this saves a round trip per lookup. Read-only: the result may be the mirror's own copy.
 */
export async function findForCheck(
  ctx: ServerContext,
  served: ServedResource,
  namespace: string | undefined,
  name: string,
  fits: (obj: ApiObject) => boolean = () => true,
): Promise<ApiObject | undefined> {
  const cached = (ctx.mirrorOf?.(served.def) ?? ctx.lookupMirrorOf?.(served.def))?.get(namespace, name);
  if (cached && fits(cached)) return cached;
  return served.registry.find(namespace, name);
}

/**
 * Every object of `served` in `namespace` (cluster-scoped: undefined), sorted by name as a store
 * list is: from its mirror when the server keeps one (what admission reads on every create, as
 * upstream's listers), else listed from the store. Read-only: the results may be the mirror's own
 * copies. A mirror lags the store by a watch delivery; writes to a mirrored kind wait for it
 * (handlers/visibility.ts), so a client's own write is in it for its next request.
 */
export async function listMirrored(ctx: ServerContext, served: ServedResource, namespace: string | undefined, signal?: AbortSignal): Promise<ApiObject[]> {
  const mirror = ctx.mirrorOf?.(served.def);
  if (!mirror) return (await served.registry.list({ namespace, filter: MATCH_ALL, signal })).items;
  return [...mirror.inNamespace(namespace)].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
}
