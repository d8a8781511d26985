/**
 * The storage interface of the API server (docs/architecture.md decision 3: kine-shaped).
 *
 * Keys are `/registry/<resource>/<namespace>/<name>` (cluster-scoped: `/registry/<resource>/<name>`).
 * Values are opaque bytes (the API server stores JSON). Every successful write gets a new global
 * revision, strictly increasing across the whole store; an object's `modRevision` is what the API
 * server reports as `metadata.resourceVersion`.
 *
 * Concurrency: all methods are safe to call concurrently. Writes are compare-and-swap: `create`
 * fails with ERR_ALREADY_EXISTS, `update`/`delete` with ERR_CONFLICT when the expected revision is
 * not the current one (the caller re-reads and retries or reports 409). Reads below the compacted
 * revision fail with ERR_GONE (the API server answers 410 Expired).
 *
 * Durability: a write resolves only once it is durable (a `kill -9` afterwards loses nothing).
 */
export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** Revision of the write that created this key (etcd create_revision). */
  createRevision: number;
  /** Revision of the last write to this key (etcd mod_revision) = resourceVersion. */
  modRevision: number;
  /**
   * Read with an encryption provider or key other than the first (storage/encryption/): an
   * update writes it even when nothing changed, so rewriting re-encrypts it with the first.
   */
  stale?: boolean;
}

export interface ListOptions {
  /** Read at this revision (a consistent snapshot); default: current. ERR_GONE if compacted. */
  revision?: number;
  /** Maximum items to return; 0 or undefined = all. */
  limit?: number;
  /** Return keys strictly greater than this one (pagination continues after the last key returned). */
  startAfter?: string;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at (use it for the next page and for a following watch). */
  revision: number;
  /** True when more keys remain after the last item. */
  more: boolean;
  /** Number of keys remaining after this page (best effort, for ListMeta.remainingItemCount). */
  remaining?: number;
}

export type WatchEventType = 'PUT' | 'DELETE';

export interface WatchEvent {
  type: WatchEventType;
  /**
   * For PUT: the new value; for DELETE: the last value before deletion, with that value's own
   * `modRevision` (the deletion's revision is `revision`; the API server reports it as the
   * deleted object's resourceVersion, as kube-apiserver does).
   */
  kv: KeyValue;
  /** For PUT updates: the previous value (undefined on create). For DELETE: same as kv. */
  prevKv?: KeyValue;
  /** The revision of this event (for DELETE: the deletion's revision). */
  revision: number;
  /** True when the key did not exist before this PUT. */
  isCreate: boolean;
}

export interface WatchOptions {
  /** Deliver events with revision > afterRevision. ERR_GONE (thrown from the iterator) if compacted. */
  afterRevision: number;
  signal: AbortSignal;
}

export interface Store {
  /** Current value of `key`, or undefined. */
  get(key: string, opts?: { signal?: AbortSignal }): Promise<KeyValue | undefined>;
  /** Keys with `prefix`, sorted by key. */
  list(prefix: string, opts?: ListOptions & { signal?: AbortSignal }): Promise<ListResult>;
  /** Number of keys with `prefix` at the current revision. */
  count(prefix: string): Promise<number>;
  /** Creates `key`; returns the new revision. ERR_ALREADY_EXISTS if it exists. */
  create(key: string, value: Uint8Array): Promise<number>;
  /** Replaces `key` if its modRevision is `expectedRevision`; returns the new revision. ERR_CONFLICT / ERR_NOT_FOUND. */
  update(key: string, value: Uint8Array, expectedRevision: number): Promise<number>;
  /**
   * Deletes `key` (only if its modRevision is `expectedRevision`, when given); returns the deletion
   * revision and the last value. ERR_NOT_FOUND / ERR_CONFLICT.
   */
  delete(key: string, expectedRevision?: number): Promise<{ revision: number; kv: KeyValue }>;
  /**
   * Events under `prefix` after a revision, in revision order, until the signal aborts (the
   * iterator then ends without error). Throws ERR_GONE when `afterRevision` is below the
   * compacted revision (also later, for a consumer so slow that compaction overtook it) and
   * ERR_UNAVAILABLE when the store is closed. Safe to abandon: abort or `return()` detaches it.
   */
  watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent>;
  /** The latest revision of the whole store. */
  currentRevision(): Promise<number>;
  /** The oldest revision still readable (reads/watches below it are ERR_GONE). */
  compactedRevision(): Promise<number>;
  /** Drops history at or below `revision` (keeps current values). */
  compact(revision: number): Promise<void>;
  /** Releases connections and files. Idempotent. */
  close(): Promise<void>;
}
