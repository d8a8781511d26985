/**
 * The bytes of watch events, encoded once per object, event type and media type and shared by
 * every watcher that sends the same event (kube-apiserver's watch cache does the same with its
 * cached serializations): 100 nodes watching one pod change cost one encode, not 100.
 *
 * What differs between watchers stays per watcher: selectors only decide whether and as which type
 * an event is sent, so the key is (object, type, media, apiVersion); the synthetic DELETED for an
 * object leaving a watcher's selector is one object per cache event ({@link exitObject}), so it is
 * shared too. Tables (kubectl get --watch) and bookmarks are encoded per watcher.
 *
 * Entries hang off the object in a WeakMap, so they live exactly as long as the watch cache's
 * buffer (or an in-flight watch) holds the event. Synchronous; one per API server.
 */
import { encodeWatchFrame } from '@nodelet/api';
import type { ApiObject } from './object.js';
import type { ResourceDef } from './resource.js';
import type { CacheEvent } from './watch-cache.js';
import { withTypeMeta } from './context.js';
import { protobufBytes } from './wire-media.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export class WatchEventEncoder {
  readonly #cache = new WeakMap<object, Map<string, Buffer | null>>();
  readonly #exits = new WeakMap<CacheEvent, ApiObject>();
  readonly #share: boolean;
  #encodes = 0;

  /** `share: false` encodes per watcher (the old path; bench/watch-encoding.ts compares both). */
  constructor(opts: { share?: boolean } = {}) {
    this.#share = opts.share ?? true;
  }

  /** How many events were actually encoded (tests and the bench read it). */
  get encodes(): number {
    return this.#encodes;
  }

  /**
   * One event line (JSON) or frame (protobuf), or undefined when the protobuf table cannot carry
   * `obj`. `shared` says whether `obj` is seen by other watchers (a cache event's object); the
   * initial ADDED events of a watch are read per watcher and not worth remembering.
   */
  encode(def: ResourceDef, media: 'json' | 'protobuf', type: WatchEventType, obj: ApiObject, shared: boolean): Buffer | undefined {
    if (!shared || !this.#share) return this.#encode(def, media, type, obj);
    const key = `${media} ${type} ${def.group}/${def.version}`;
    let entries = this.#cache.get(obj);
    if (!entries) {
      entries = new Map();
      this.#cache.set(obj, entries);
    }
    const hit = entries.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const bytes = this.#encode(def, media, type, obj);
    entries.set(key, bytes ?? null);
    return bytes;
  }

  /** The object a watcher sees as DELETED when `e` moves it out of its selector: the old state at the event's RV. */
  exitObject(e: CacheEvent): ApiObject {
    const made = this.#share ? this.#exits.get(e) : undefined;
    if (made) return made;
    const obj = { ...e.prev!, metadata: { ...e.prev!.metadata, resourceVersion: e.object.metadata.resourceVersion } };
    if (this.#share) this.#exits.set(e, obj);
    return obj;
  }

  #encode(def: ResourceDef, media: 'json' | 'protobuf', type: WatchEventType, obj: ApiObject): Buffer | undefined {
    this.#encodes++;
    if (media === 'json') return Buffer.from(JSON.stringify({ type, object: withTypeMeta(def, obj) }) + '\n');
    const inner = protobufBytes(withTypeMeta(def, obj));
    if (!inner) return undefined;
    const frame = encodeWatchFrame(type, inner);
    return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  }
}
