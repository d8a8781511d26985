/**
 * One store watch per resource, fanned out to every API watcher of that resource (kube's
 * cacher). Keeps the last `capacity` events, and no more than `capacityBytes` of them counted
 * by their stored size (object and previous object), so a watcher resuming from a recent
 * resourceVersion replays from memory; older resourceVersions fall back to a direct store watch
 * (which yields ERR_GONE → 410 when compacted). The byte bound is what keeps a client that
 * rewrites one large object from pinning a thousand copies of it in memory.
 *
 *   store.watch(prefix) ──▶ WatchCache ──▶ subscriber 1..N (each with its own filter and queue)
 *
 * Started lazily by the first subscriber; if the store watch fails, every subscriber is ended
 * (clients re-watch from their last RV) and the next subscriber starts a new store watch.
 *
 * A kind may have a trigger field (pods: `spec.nodeName`, as the cacher's trigger function). A
 * subscriber whose field selector requires an exact value of it is filed under that value and
 * handed only the events whose object, or previous object, has that value: a pod event reaches
 * its node's watcher, not the other hundred nodes' ones. Subscribers without such a value get
 * every event, as before.
 */
import { fieldValue } from '@nodelet/api';
import { AgentError, type Logger } from '@nodelet/base';
import type { KeyValue, Store, WatchEvent } from '../storage/types.js';
import type { ApiObject } from './object.js';
import type { Registry } from './registry.js';

export interface CacheEvent {
  revision: number;
  /** The object after the event (for deletes: the last state, with the deletion RV). */
  object: ApiObject;
  /** The object before (updates and deletes). */
  prev?: ApiObject;
  /** Whether `prev` is set, known without decoding it. */
  hasPrev: boolean;
  /**
   * The trigger field's value in `prev`, when the cache worked it out while filing the event (a
   * watcher whose only selector is that field can then skip decoding `prev`).
   */
  prevTrigger?: string;
  kind: 'create' | 'update' | 'delete';
}

/**
 * A store event whose objects are decoded on first read, once: a cache no subscriber reads
 * (its watchers gone, its pump still running) parses nothing, and an update's previous object is
 * parsed only for a watcher whose selector needs it. The stored bytes are let go once decoded.
 * An object this server wrote itself is not parsed at all: the registry kept a copy of it.
 */
class StoredEvent implements CacheEvent {
  readonly revision: number;
  readonly kind: CacheEvent['kind'];
  readonly hasPrev: boolean;
  /** The store key. */
  readonly key: string;
  /** The trigger field's values (see WatchCache #triggerValues), once worked out at dispatch. */
  triggers: string[] | undefined;
  prevTrigger: string | undefined;
  readonly #registry: Registry;
  #kv: KeyValue | undefined;
  #prevKv: KeyValue | undefined;
  #object: ApiObject | undefined;
  #prev: ApiObject | undefined;

  constructor(registry: Registry, e: WatchEvent) {
    this.#registry = registry;
    this.revision = e.revision;
    this.key = e.kv.key;
    this.kind = e.type === 'DELETE' ? 'delete' : e.isCreate ? 'create' : 'update';
    // The object this server just wrote, when it still has it (Registry.takeWritten): taken
    // now, in event order, so the registry's kept writes drain even when nobody reads this event.
    this.#object = e.type === 'DELETE' ? undefined : registry.takeWritten(e.kv);
    this.#kv = this.#object ? undefined : e.kv;
    // A delete's previous object is its last state (the same bytes, at their own revision).
    this.#prevKv = e.type === 'DELETE' ? e.kv : e.prevKv;
    this.hasPrev = this.#prevKv !== undefined;
  }

  get object(): ApiObject {
    if (this.#kv) {
      this.#object = this.#registry.decode(this.#kv, this.kind === 'delete' ? this.revision : this.#kv.modRevision);
      this.#kv = undefined;
    }
    return this.#object!;
  }

  get prev(): ApiObject | undefined {
    if (this.#prevKv) {
      this.#prev = this.#registry.decode(this.#prevKv);
      this.#prevKv = undefined;
    }
    return this.#prev;
  }
}

/** Default bound of one resource's cache, in stored bytes (limits.ts `watchCacheBytes`). */
export const DEFAULT_WATCH_CACHE_BYTES = 32 * 1024 * 1024;

export interface Subscription {
  /** Ends delivery; idempotent. */
  close(): void;
}

/**
 * The field each kind's cache indexes its watchers by, keyed `group/plural` (upstream's pod
 * registry passes `NodeNameTriggerFunc`, so the kubelets' per-node watches cost one lookup).
 */
const TRIGGER_FIELDS: ReadonlyMap<string, string> = new Map([['/pods', 'spec.nodeName']]);

interface Subscriber {
  fromRevision: number;
  /** The trigger field's value this subscriber requires, if any. */
  triggerValue: string | undefined;
  deliver(e: CacheEvent): void;
  end(err?: unknown): void;
}

export class WatchCache {
  readonly #store: Store;
  readonly #registry: Registry;
  readonly #log: Logger;
  readonly #capacity: number;
  readonly #capacityBytes: number;
  #buffer: CacheEvent[] = [];
  /** Stored size of each buffered event, parallel to #buffer. */
  #sizes: number[] = [];
  #bytes = 0;
  /** Events with revision <= this are not (or no longer) in the buffer. */
  #floor = Number.POSITIVE_INFINITY;
  #running?: AbortController;
  #ready?: Promise<void>;
  /** Subscribers handed every event. */
  #subscribers = new Set<Subscriber>();
  /** Subscribers that require one value of the trigger field, by that value. */
  #byTrigger = new Map<string, Set<Subscriber>>();
  /**
   * The trigger field's value in the object of the last event dispatched for each key, while
   * every event since was dispatched with it kept: an update's previous object is that event's
   * object, so its value is known without decoding the previous object. Emptied whenever an event
   * passes unindexed (no subscriber filed under a value) and when the store watch (re)starts.
   */
  #lastTrigger = new Map<string, string>();
  #closed = false;
  /** The field subscribers may be indexed by (undefined: the kind has none). */
  readonly triggerField: string | undefined;

  constructor(opts: { store: Store; registry: Registry; logger: Logger; capacity?: number; capacityBytes?: number }) {
    this.#store = opts.store;
    this.#registry = opts.registry;
    this.#log = opts.logger;
    this.#capacity = opts.capacity ?? 1000;
    this.#capacityBytes = opts.capacityBytes ?? DEFAULT_WATCH_CACHE_BYTES;
    this.triggerField = TRIGGER_FIELDS.get(`${opts.registry.def.group}/${opts.registry.def.plural}`);
  }

  /** Stored bytes the buffered events stand for (tests, metrics). */
  get bufferedBytes(): number {
    return this.#bytes;
  }

  /** Newest revision the cache has delivered (0 before start). */
  get lastRevision(): number {
    return this.#buffer.length ? this.#buffer[this.#buffer.length - 1]!.revision : Number.isFinite(this.#floor) ? this.#floor : 0;
  }

  /**
   * Delivers every event with revision > fromRevision, in order, then live events. Returns
   * undefined when the cache cannot serve that revision (the caller watches the store directly).
   * `triggerValue`: the value of {@link triggerField} the subscriber's selector requires exactly;
   * it is then handed only events whose object or previous object has that value (it still
   * filters them itself: the index only leaves out what its selector cannot match).
   */
  async subscribe(
    fromRevision: number,
    handlers: { onEvent(e: CacheEvent): void; onEnd(err?: unknown): void },
    triggerValue?: string,
  ): Promise<Subscription | undefined> {
    if (this.#closed) return undefined;
    // A compacted revision is gone even if the cache still remembers it: the client relists.
    const compacted = await this.#store.compactedRevision();
    if (fromRevision < compacted) throw new AgentError('ERR_GONE', `revision ${fromRevision} is compacted (oldest ${compacted})`);
    await this.#start();
    if (fromRevision < this.#floor) return undefined;
    const indexed = this.triggerField !== undefined ? triggerValue : undefined;
    const sub: Subscriber = { fromRevision, triggerValue: indexed, deliver: handlers.onEvent, end: handlers.onEnd };
    for (const e of this.#buffer) if (e.revision > fromRevision && (indexed === undefined || this.#triggerValues(e).includes(indexed))) sub.deliver(e);
    if (indexed === undefined) {
      this.#subscribers.add(sub);
      return { close: () => void this.#subscribers.delete(sub) };
    }
    let set = this.#byTrigger.get(indexed);
    if (!set) this.#byTrigger.set(indexed, (set = new Set()));
    set.add(sub);
    return {
      close: () => {
        const cur = this.#byTrigger.get(indexed);
        if (!cur?.delete(sub) || cur.size > 0) return;
        this.#byTrigger.delete(indexed);
      },
    };
  }

  get subscriberCount(): number {
    let n = this.#subscribers.size;
    for (const set of this.#byTrigger.values()) n += set.size;
    return n;
  }

  /** Stops the store watch and ends every subscriber. */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  #start(): Promise<void> {
    if (this.#ready) return this.#ready;
    const ac = new AbortController();
    this.#running = ac;
    this.#ready = (async () => {
      const rev = await this.#store.currentRevision();
      this.#registry.keepWrites(true);
      this.#floor = rev;
      this.#clearBuffer();
      void this.#pump(rev, ac);
    })();
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  async #pump(fromRevision: number, ac: AbortController): Promise<void> {
    let failure: unknown;
    try {
      this.#lastTrigger.clear();
      for await (const e of this.#store.watch(this.#registry.prefix(), { afterRevision: fromRevision, signal: ac.signal })) {
        const ev = new StoredEvent(this.#registry, e);
        this.#append(ev, e.kv.value.length + (e.type === 'DELETE' ? e.kv.value.length : (e.prevKv?.value.length ?? 0)));
        this.#dispatch(ev);
      }
    } catch (err) {
      failure = err;
    }
    if (ac.signal.aborted) return;
    this.#log.warn({ resource: this.#registry.def.plural, err: failure }, 'Watch cache lost its store watch');
    this.#stop(failure);
  }

  /** Hands `ev` to every unindexed subscriber and to the indexed ones filed under its trigger values. */
  #dispatch(ev: StoredEvent): void {
    for (const s of this.#subscribers) s.deliver(ev);
    if (this.#byTrigger.size === 0) {
      if (this.#lastTrigger.size > 0) this.#lastTrigger.clear();
      return;
    }
    const values = this.#triggerValues(ev, this.#lastTrigger.get(ev.key));
    ev.triggers = values;
    // A delete's previous object is its object; an update's value is the second when it differs.
    if (ev.hasPrev) ev.prevTrigger = ev.kind === 'delete' ? values[0] : (values[1] ?? values[0]);
    if (ev.kind === 'delete') this.#lastTrigger.delete(ev.key);
    else this.#lastTrigger.set(ev.key, values[0]!);
    for (const v of values) {
      const set = this.#byTrigger.get(v);
      if (set) for (const s of set) s.deliver(ev);
    }
  }

  /**
   * The trigger field's value in the event's object and, when it differs, in its previous object:
   * a pod bound to a node ("" → node) must reach that node's watcher as ADDED and a watcher of
   * unbound pods as DELETED, as the cacher does. A delete's previous object is its object.
   * `prevValue`: the previous object's value when known without decoding it (#lastTrigger).
   */
  #triggerValues(ev: CacheEvent, prevValue?: string): string[] {
    if (ev instanceof StoredEvent && ev.triggers) return ev.triggers;
    const field = this.triggerField!;
    const now = fieldValue(ev.object, field);
    if (!ev.hasPrev || ev.kind === 'delete') return [now];
    const before = prevValue ?? fieldValue(ev.prev, field);
    return before === now ? [now] : [now, before];
  }

  /**
   * Buffers `ev` and evicts the oldest events past either bound. The newest event always stays
   * (a single event larger than the byte bound is still delivered live; only its replay is lost).
   */
  #append(ev: CacheEvent, size: number): void {
    this.#buffer.push(ev);
    this.#sizes.push(size);
    this.#bytes += size;
    let drop = 0;
    while (this.#buffer.length - drop > 1 && (this.#buffer.length - drop > this.#capacity || this.#bytes > this.#capacityBytes)) {
      this.#bytes -= this.#sizes[drop]!;
      drop++;
    }
    if (drop === 0) return;
    this.#floor = this.#buffer[drop - 1]!.revision;
    this.#buffer.splice(0, drop);
    this.#sizes.splice(0, drop);
  }

  #clearBuffer(): void {
    this.#buffer = [];
    this.#sizes = [];
    this.#bytes = 0;
  }

  #stop(err?: unknown): void {
    this.#registry.keepWrites(false);
    this.#running?.abort();
    this.#running = undefined;
    this.#ready = undefined;
    this.#floor = Number.POSITIVE_INFINITY;
    this.#clearBuffer();
    this.#lastTrigger.clear();
    const subs = [...this.#subscribers];
    for (const set of this.#byTrigger.values()) subs.push(...set);
    this.#subscribers.clear();
    this.#byTrigger.clear();
    for (const s of subs) s.end(err);
  }
}
