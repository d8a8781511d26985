/**
 * Generic REST storage of one resource over the kine-shaped {@link Store}: JSON values, the
 * object's resourceVersion = the key's modRevision (never stored inside the value), paginated
 * lists at one revision, and `guaranteedUpdate` (read → mutate → compare-and-swap, retried on a
 * lost race unless the caller pinned a resourceVersion).
 */
import { hasCode } from '@nodelet/base';
import type { KeyValue, Store } from '../storage/types.js';
import { MATCH_ALL, type ObjectFilter } from './filter.js';
import { cloneJson, jsonRoundTrip, type ApiObject } from './object.js';
import { asServedVersion, asStorageVersion } from './apiextensions/custom-defs.js';
import { apiVersionOf, storageKey, storagePrefix, type ResourceDef } from './resource.js';
import { storedJson } from './stored-json.js';
import { alreadyExists, badRequest, conflict, expired, notFound, StatusError } from './status.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * etcd's default --max-request-bytes (1.5 MiB): etcd refuses a write request larger than this.
 * Checked here, above every store, so SQLite holds no object etcd could not, and the watch
 * cache and every watcher never see one.
 */
export const MAX_STORED_OBJECT_BYTES = 1.5 * 1024 * 1024;
/** Room for the rest of an etcd write request (the compare, the key twice, protobuf framing). */
const WRITE_REQUEST_OVERHEAD = 1024;
/**
 * Bound of the writes kept for the watch cache ({@link Registry.takeWritten}); each is taken by
 * its watch event, so only writes whose event never came (a store watch restarted in between)
 * stay, and the oldest are dropped past this.
 */
const MAX_KEPT_WRITES = 1024;

/** A write's stored bytes and the object they decode to, without its resourceVersion. */
interface KeptWrite {
  value: Uint8Array;
  object: ApiObject;
}

export interface ListRequest {
  namespace?: string;
  filter: ObjectFilter;
  limit?: number;
  continueToken?: string;
  /** Exact revision to read at (from a continue token or resourceVersionMatch=Exact). */
  revision?: number;
  /** The request's signal: stops the page reads once it aborts. */
  signal?: AbortSignal;
}

export interface ListPage {
  items: ApiObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

/** The served JSON of objects {@link Registry.create} just stored, by object (see {@link createdJsonOf}). */
const createdJson = new WeakMap<ApiObject, { rv: string; text: () => string }>();

/**
 * The reply text of an object {@link Registry.create} returned (`withTypeMeta` and
 * `JSON.stringify` of it, made from the fields already stringified for the store), once: the
 * caller replies with it instead of serialising the object again. Undefined for a kind stored
 * in another form, and when the object's resourceVersion changed since.
 */
export function createdJsonOf(obj: ApiObject): string | undefined {
  const entry = createdJson.get(obj);
  createdJson.delete(obj);
  return entry && entry.rv === obj.metadata.resourceVersion ? entry.text() : undefined;
}

export class Registry {
  readonly def: ResourceDef;
  readonly #store: Store;
  readonly #typeMeta: { apiVersion: string; kind: string };
  /** While a watch cache reads this resource's events: the latest write of each key, until its event comes. */
  #kept: Map<string, KeptWrite> | undefined;
  #cachedObject: ((namespace: string | undefined, name: string) => ApiObject | undefined) | undefined;

  constructor(def: ResourceDef, store: Store) {
    this.def = def;
    this.#store = store;
    this.#typeMeta = { apiVersion: apiVersionOf(def), kind: def.kind };
  }

  key(namespace: string | undefined, name: string): string {
    return storageKey(this.def, namespace, name);
  }

  prefix(namespace?: string): string {
    return storagePrefix(this.def, namespace);
  }

  decode(kv: KeyValue, revision = kv.modRevision): ApiObject {
    const stored = JSON.parse(decoder.decode(kv.value)) as ApiObject;
    stored.metadata ??= {};
    const obj = this.def.storageCodec ? this.def.storageCodec.fromStored(stored) : stored;
    obj.metadata.resourceVersion = String(revision);
    return asServedVersion(this.def, obj);
  }

  /**
   * Called by the resource's watch cache while it runs: from then on each write keeps a copy of
   * the object it stored, for {@link takeWritten}. Off again (and the copies dropped) with false.
   */
  keepWrites(on: boolean): void {
    this.#kept = on ? (this.#kept ?? new Map()) : undefined;
  }

  /**
   * The object a watch event's `kv` decodes to, when this registry wrote exactly those bytes
   * under that key: the copy kept at the write (the same JSON values {@link decode} would parse,
   * with `kv`'s revision as resourceVersion), once. Undefined otherwise (the caller decodes).
   */
  takeWritten(kv: KeyValue, revision = kv.modRevision): ApiObject | undefined {
    const kept = this.#kept?.get(kv.key);
    if (!kept || kept.value.length !== kv.value.length || Buffer.compare(kept.value, kv.value) !== 0) return undefined;
    this.#kept!.delete(kv.key);
    kept.object.metadata.resourceVersion = String(revision);
    return kept.object;
  }

  /**
   * Keeps `obj` as stored in `value` under `key` when a watch cache asked for writes and the kind
   * is stored as served (no storage codec or custom-kind pruning between the bytes and the
   * object). Returns the entry, for {@link #forget} when the write fails.
   */
  #keep(key: string, value: Uint8Array, obj: ApiObject): KeptWrite | undefined {
    if (!this.#kept || this.def.storageCodec || this.def.custom) return undefined;
    const { resourceVersion: _rv, ...meta } = obj.metadata;
    const object = jsonRoundTrip({ ...obj, metadata: meta });
    if (!object) return undefined;
    const entry = { value, object };
    this.#kept.delete(key);
    this.#kept.set(key, entry);
    if (this.#kept.size > MAX_KEPT_WRITES) this.#kept.delete(this.#kept.keys().next().value!);
    return entry;
  }

  /**
   * Where {@link guaranteedUpdate} finds a cached copy of an object to start from (the server's
   * pod mirror, server.ts); read-only, cloned before use.
   */
  readCachedFrom(find: (namespace: string | undefined, name: string) => ApiObject | undefined): void {
    this.#cachedObject = find;
  }

  #forget(key: string, entry: KeptWrite | undefined): void {
    if (entry && this.#kept?.get(key) === entry) this.#kept.delete(key);
  }

  encode(obj: ApiObject): Uint8Array {
    return encoder.encode(this.#serialise(obj).stored);
  }

  /**
   * The stored text of `obj`, and for a kind stored as it is served (no storage codec, not a
   * custom kind), the served text from the same stringified fields (stored-json.ts).
   */
  #serialise(obj: ApiObject): { stored: string; served?: (rv: string) => string } {
    if (!this.def.storageCodec && !this.def.custom) return storedJson(obj, this.#typeMeta);
    // events.k8s.io Events are stored as core Events (storageCodec); a custom kind in its storage version.
    const stored = this.def.storageCodec ? this.def.storageCodec.toStored(obj) : asStorageVersion(this.def, obj);
    const { resourceVersion: _rv, ...meta } = stored.metadata;
    return { stored: JSON.stringify({ ...stored, metadata: meta }) };
  }

  /** The stored form of `obj` under `key`; 413 as etcd answers when the write would be too large. */
  #encodeForWrite(key: string, obj: ApiObject): { value: Uint8Array; served?: (rv: string) => string } {
    const text = this.#serialise(obj);
    const value = encoder.encode(text.stored);
    if (value.length + 2 * Buffer.byteLength(key) + WRITE_REQUEST_OVERHEAD > MAX_STORED_OBJECT_BYTES) {
      throw new StatusError(413, 'RequestEntityTooLarge', 'etcdserver: request is too large');
    }
    return { value, ...(text.served ? { served: text.served } : {}) };
  }

  async find(namespace: string | undefined, name: string, opts: { signal?: AbortSignal } = {}): Promise<ApiObject | undefined> {
    const kv = await this.#store.get(this.key(namespace, name), opts);
    return kv ? this.decode(kv) : undefined;
  }

  async get(namespace: string | undefined, name: string, opts: { signal?: AbortSignal } = {}): Promise<ApiObject> {
    const obj = await this.find(namespace, name, opts);
    if (!obj) throw notFound(this.def.plural, this.def.group, name);
    return obj;
  }

  /** Reads pages of the store until `limit` objects pass the filter; all pages at one revision. */
  async list(req: ListRequest): Promise<ListPage> {
    const prefix = this.prefix(req.namespace);
    let revision = req.revision;
    let startAfter: string | undefined;
    if (req.continueToken) {
      const token = decodeContinue(req.continueToken);
      revision = token.rv;
      startAfter = prefix + token.start;
    }
    const limit = req.limit && req.limit > 0 ? req.limit : 0;
    const items: ApiObject[] = [];
    let listRevision = revision ?? 0;
    let lastKey: string | undefined;
    let more = false;
    let remaining: number | undefined;
    try {
      for (;;) {
        const want = limit ? Math.max(limit - items.length, 1) : 0;
        const page = await this.#store.list(prefix, { revision: revision, limit: limit ? Math.max(want, 50) : 0, startAfter, signal: req.signal });
        listRevision = page.revision;
        revision = page.revision;
        let stoppedEarly = false;
        for (let i = 0; i < page.items.length; i++) {
          const kv = page.items[i]!;
          const obj = this.decode(kv);
          lastKey = kv.key;
          if (req.filter(obj)) items.push(obj);
          if (limit && items.length >= limit) {
            stoppedEarly = i < page.items.length - 1 || page.more;
            remaining = page.remaining !== undefined ? page.remaining + (page.items.length - 1 - i) : undefined;
            break;
          }
        }
        if (limit && items.length >= limit) {
          more = stoppedEarly;
          break;
        }
        if (!page.more || page.items.length === 0) break;
        startAfter = page.items[page.items.length - 1]!.key;
      }
    } catch (err) {
      if (hasCode(err, 'ERR_GONE') && req.continueToken) {
        throw new StatusError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
      if (hasCode(err, 'ERR_GONE')) throw expired(`too old resource version: ${String(req.revision)}`);
      throw err;
    }
    const out: ListPage = { items, resourceVersion: String(listRevision) };
    if (more && lastKey) {
      out.continueToken = encodeContinue({ v: 'meta.k8s.io/v1', rv: listRevision, start: lastKey.slice(prefix.length) });
      if (remaining !== undefined && remaining > 0 && req.filter === MATCH_ALL) out.remainingItemCount = remaining;
    }
    return out;
  }

  /** `signal`: the request's; an aborted request writes nothing (the store's writes take no signal, so it is checked before). */
  async create(obj: ApiObject, opts: { signal?: AbortSignal } = {}): Promise<ApiObject> {
    const name = obj.metadata.name!;
    opts.signal?.throwIfAborted();
    try {
      const key = this.key(obj.metadata.namespace, name);
      const { value, served } = this.#encodeForWrite(key, obj);
      const kept = this.#keep(key, value, obj);
      let rev: string;
      try {
        rev = String(await this.#store.create(key, value));
      } catch (err) {
        this.#forget(key, kept);
        throw err;
      }
      obj.metadata.resourceVersion = rev;
      if (served) createdJson.set(obj, { rv: rev, text: () => served(rev) });
      return obj;
    } catch (err) {
      if (hasCode(err, 'ERR_ALREADY_EXISTS')) throw alreadyExists(this.def.plural, this.def.group, name);
      throw err;
    }
  }

  /**
   * Read-modify-write. `mutate` gets a fresh copy of the current object and returns the next one
   * (or undefined for "no change"). When `preconditionRV` is set and differs from the stored RV →
   * 409; otherwise a lost race re-reads and retries.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    mutate: (current: ApiObject) => Promise<ApiObject | undefined> | ApiObject | undefined,
    opts: { preconditionRV?: string; ifMissing?: () => Promise<ApiObject>; signal?: AbortSignal } = {},
  ): Promise<{ object: ApiObject; changed: boolean; created?: boolean }> {
    const key = this.key(namespace, name);
    // The first attempt starts from the cached copy when there is one (upstream's cacher hands
    // its object to the store's GuaranteedUpdate the same way): on etcd that saves the read, a
    // round trip. A copy that turns out stale (the write's guard fails, the precondition or
    // `mutate` refuses it, or it needs no change) is never the answer: the store is read and the
    // attempt made again, as after a lost race.
    let cached = this.#cachedObject?.(namespace, name);
    for (let attempt = 0; attempt < 20; attempt++) {
      const fromCache = cached !== undefined;
      const kv = fromCache ? undefined : await this.#store.get(key, { signal: opts.signal });
      if (!fromCache && !kv) {
        if (opts.ifMissing) return { object: await opts.ifMissing(), changed: true, created: true };
        throw notFound(this.def.plural, this.def.group, name);
      }
      const current = cached ?? this.decode(kv!);
      const modRevision = kv ? kv.modRevision : Number(current.metadata.resourceVersion);
      cached = undefined;
      if (fromCache && (!Number.isSafeInteger(modRevision) || (opts.preconditionRV && opts.preconditionRV !== current.metadata.resourceVersion))) continue;
      if (opts.preconditionRV && opts.preconditionRV !== current.metadata.resourceVersion) throw conflict(this.def.plural, this.def.group, name);
      // A value read with an old encryption key is written even unchanged (kube's "stale"):
      // that is how rewriting every Secret moves them to a new key.
      let next: ApiObject | undefined;
      try {
        next = (await mutate(cloneJson(current))) ?? (kv?.stale ? cloneJson(current) : undefined);
      } catch (err) {
        if (fromCache) continue;
        throw err;
      }
      if (!next && fromCache) continue;
      if (!next) return { object: current, changed: false };
      opts.signal?.throwIfAborted();
      const { value } = this.#encodeForWrite(key, next);
      const kept = this.#keep(key, value, next);
      try {
        const rev = await this.#store.update(key, value, modRevision);
        next.metadata.resourceVersion = String(rev);
        return { object: next, changed: true };
      } catch (err) {
        this.#forget(key, kept);
        if (fromCache && (hasCode(err, 'ERR_CONFLICT') || hasCode(err, 'ERR_NOT_FOUND'))) continue;
        if (hasCode(err, 'ERR_CONFLICT')) {
          if (opts.preconditionRV) throw conflict(this.def.plural, this.def.group, name);
          continue;
        }
        if (hasCode(err, 'ERR_NOT_FOUND')) continue;
        throw err;
      }
    }
    throw conflict(this.def.plural, this.def.group, name);
  }

  /** Removes the key if it is still at `expectedRV`; returns the object as last stored, with the deletion RV. */
  async remove(obj: ApiObject): Promise<ApiObject> {
    const name = obj.metadata.name!;
    try {
      const { revision } = await this.#store.delete(this.key(obj.metadata.namespace, name), Number(obj.metadata.resourceVersion));
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
    } catch (err) {
      if (hasCode(err, 'ERR_NOT_FOUND')) throw notFound(this.def.plural, this.def.group, name);
      if (hasCode(err, 'ERR_CONFLICT')) throw conflict(this.def.plural, this.def.group, name);
      throw err;
    }
  }
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ContinueToken;
    if (t.v !== 'meta.k8s.io/v1' || !Number.isSafeInteger(t.rv) || typeof t.start !== 'string' || t.start.includes('..')) throw new Error('bad token');
    return t;
  } catch {
    throw badRequest('continue key is not valid: the continue token is malformed');
  }
}
