/**
 * The ConfigMaps and Secrets of this node's pods, each kept by its own single-object watch
 * (kubelet's `configMapAndSecretChangeDetectionStrategy: Watch`): an informer on the object's
 * namespace with `fieldSelector=metadata.name=<name>` — the only list/watch the Node authorizer
 * grants a node on them, and only for objects its pods reference.
 *
 *   register(pod)    ──▶ for each object the pod references: first pod → open its watch; else join
 *   unregister(uid)  ──▶ for each object it referenced: last pod gone → close the watch
 *   read(kind, ns, name) ──watched──▶ the watch's cache once it has listed (absent = undefined: NotFound as a GET)
 *                        └─not watched (no registered pod references it) ─▶ `NOT_WATCHED`: the caller GETs
 *
 * Watches are counted by the set of pod UIDs that reference them (keyed kind/namespace/name), so
 * registering a pod again (every sync) is free and a changed spec moves only what changed. A
 * watch that cannot list (the server refuses, or is away) fails a read after `syncTimeoutMs`, as
 * kubelet's manager does after its wait for sync; the informer keeps retrying with backoff.
 */
import { AgentError, abortError, describeError, unlessNotFound, type Clock, type Logger } from '@nodelet/base';
import { CONFIGMAPS, Informer, SECRETS, podConfigSources, type ApiClient, type ConfigMap, type Pod, type Secret } from '@nodelet/api/agent';
import { SharedReads } from './shared-reads.js';
import type { SourceKind, SourceObject, SourceRead } from '../kubecontainer/sources.js';

export type { SourceKind, SourceRead } from '../kubecontainer/sources.js';

/** A read of an object no registered pod references: the caller reads it another way (a GET). */
export const NOT_WATCHED: unique symbol = Symbol('not watched');

export interface WatchedObjectsOptions {
  api: ApiClient;
  clock: Clock;
  log: Logger;
  /** How long a read waits for a new watch's first list before it fails (default 10 s). */
  syncTimeoutMs?: number;
}

interface Watch {
  informer: Informer<ConfigMap | Secret>;
  pods: Set<string>;
}

const keyOf = (kind: SourceKind, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

export class WatchedObjects {
  readonly #o: WatchedObjectsOptions;
  readonly #watches = new Map<string, Watch>();
  /** Pod UID → the keys it references. */
  readonly #pods = new Map<string, Set<string>>();
  #closed = false;

  constructor(o: WatchedObjectsOptions) {
    this.#o = o;
  }

  /** Watches what `pod` references now (and stops counting it for what it no longer references). */
  register(pod: Pod): void {
    const uid = pod.metadata.uid;
    const namespace = pod.metadata.namespace;
    if (!uid || !namespace || this.#closed) return;
    const now = new Set<string>();
    for (const [kind, name] of podConfigSources(pod)) now.add(keyOf(kind, namespace, name));
    const before = this.#pods.get(uid) ?? new Set<string>();
    for (const key of now) if (!before.has(key)) this.#acquire(key, uid);
    for (const key of before) if (!now.has(key)) this.#release(key, uid);
    if (now.size > 0) this.#pods.set(uid, now);
    else this.#pods.delete(uid);
  }

  /** Stops counting pod `uid` (it is gone): watches no other pod needs are closed. */
  unregister(uid: string): void {
    for (const key of this.#pods.get(uid) ?? []) this.#release(key, uid);
    this.#pods.delete(uid);
  }

  /** The object as its watch holds it (undefined when it does not exist), or NOT_WATCHED. */
  async read<K extends SourceKind>(kind: K, namespace: string, name: string, signal: AbortSignal): Promise<SourceObject<K> | undefined | typeof NOT_WATCHED> {
    const key = keyOf(kind, namespace, name);
    const w = this.#watches.get(key);
    if (!w) return NOT_WATCHED;
    if (!w.informer.hasSynced()) {
      try {
        await w.informer.waitForSync(AbortSignal.any([signal, AbortSignal.timeout(this.#o.syncTimeoutMs ?? 10_000)]));
      } catch (err) {
        if (signal.aborted) throw abortError(signal.reason);
        // Closed meanwhile (its last pod went): read it as an unwatched object.
        if (this.#watches.get(key) !== w) return NOT_WATCHED;
        throw new AgentError('ERR_UNAVAILABLE', `failed to sync ${kind} cache of ${namespace}/${name}: ${describeError(err)}`);
      }
    }
    return w.informer.get(`${namespace}/${name}`) as SourceObject<K> | undefined;
  }

  /** The keys (`kind/namespace/name`) watched now, sorted (tests, debugging). */
  watching(): string[] {
    return [...this.#watches.keys()].sort();
  }

  /** Closes every watch; later registrations are ignored (reads then GET). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#watches.values()];
    this.#watches.clear();
    this.#pods.clear();
    await Promise.all(all.map((w) => w.informer.close()));
  }

  #acquire(key: string, uid: string): void {
    let w = this.#watches.get(key);
    if (!w) {
      const [kind, namespace, name] = key.split('/') as [SourceKind, string, string];
      const informer = new Informer<ConfigMap | Secret>({
        client: this.#o.api,
        resource: kind === 'configmap' ? CONFIGMAPS : SECRETS,
        namespace,
        fieldSelector: `metadata.name=${name}`,
        clock: this.#o.clock,
        logger: this.#o.log,
      });
      w = { informer, pods: new Set() };
      this.#watches.set(key, w);
      informer.start();
    }
    w.pods.add(uid);
  }

  #release(key: string, uid: string): void {
    const w = this.#watches.get(key);
    if (!w) return;
    w.pods.delete(uid);
    if (w.pods.size > 0) return;
    this.#watches.delete(key);
    // close() only aborts the loop and waits for it; a failure there is the informer's own, logged.
    w.informer.close().catch((err: unknown) => this.#o.log.warn({ watch: key, err: describeError(err) }, 'Closing a ConfigMap/Secret watch failed'));
  }
}

/** A shared GET has no caller's signal (any may leave): this bounds it, so a hung one is not joined forever. */
const SHARED_READ_MS = 30_000;


/**
 * Reads from the object's watch when `watched` has one (strategy Watch), else by GET (strategy
 * Get, or an object no registered pod references); overlapping GETs of one object share one.
 */
export function sourceReader(api: ApiClient, watched: WatchedObjects | undefined): SourceRead {
  const shared = new SharedReads();
  return async (kind, namespace, name, signal) => {
    const got = watched ? await watched.read(kind, namespace, name, signal) : NOT_WATCHED;
    if (got !== NOT_WATCHED) return got;
    const resource = kind === 'configmap' ? CONFIGMAPS : SECRETS;
    const get = (): Promise<ConfigMap | Secret | undefined> => unlessNotFound(api.get<ConfigMap | Secret>(resource, name, { namespace, signal: AbortSignal.timeout(SHARED_READ_MS) }));
    return (await shared.read(`${kind}/${namespace}/${name}`, get, signal)) as SourceObject<typeof kind> | undefined;
  };
}

