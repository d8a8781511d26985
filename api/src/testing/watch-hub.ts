/**
 * The watch side of InMemoryApiServer: open watch responses, replay from a resourceVersion,
 * fan-out of store events with the apiserver cacher's selector semantics, and the knobs tests
 * use (drop, expire, bookmark).
 */
import type http from 'node:http';
import type { KubeObject, Status } from '../types/meta.js';
import { apiVersionOf, type ResourceType } from '../types/resources.js';
import type { MemoryStore, StoreEvent } from './memory-store.js';

interface Watcher {
  r: ResourceType;
  matches: (o: KubeObject) => boolean;
  res: http.ServerResponse;
  bookmarks: boolean;
}

export interface WatchRequest {
  r: ResourceType;
  namespace?: string;
  /** Label and field selectors, already parsed by the caller. */
  matches: (o: KubeObject) => boolean;
  resourceVersion: string;
  allowWatchBookmarks: boolean;
  timeoutSeconds: number;
}

export class WatchHub {
  readonly #store: MemoryStore;
  readonly #watchers = new Set<Watcher>();

  constructor(store: MemoryStore) {
    this.#store = store;
    store.subscribe((e) => {
      for (const w of this.#watchers) deliver(w, e);
    });
  }

  get size(): number {
    return this.#watchers.size;
  }

  /** Serves one watch request on `res` until the client leaves, the timeout, or a test knob. */
  serve(q: WatchRequest, res: http.ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const inScope = (o: KubeObject): boolean => !q.r.namespaced || !q.namespace || o.metadata.namespace === q.namespace;
    const w: Watcher = { r: q.r, matches: (o) => inScope(o) && q.matches(o), res, bookmarks: q.allowWatchBookmarks };
    if (q.resourceVersion === '' || q.resourceVersion === '0') {
      for (const o of this.#store.list(q.r, q.namespace).filter(w.matches)) writeEvent(res, 'ADDED', o);
    } else {
      const replay = this.#store.since(Number(q.resourceVersion));
      if (!replay) {
        writeEvent(res, 'ERROR', expired(Number(q.resourceVersion), this.#store.compactedRevision));
        res.end();
        return;
      }
      for (const e of replay) deliver(w, e);
    }
    this.#watchers.add(w);
    const timer = q.timeoutSeconds > 0 ? setTimeout(() => res.end(), q.timeoutSeconds * 1000) : undefined;
    res.once('close', () => {
      if (timer) clearTimeout(timer);
      this.#watchers.delete(w);
    });
  }

  /** Cuts every open watch without a final event (a dropped connection). */
  drop(): void {
    for (const w of this.#watchers) w.res.destroy();
    this.#watchers.clear();
  }

  /** Sends `ERROR 410 Expired` to every watch and ends it, as the cacher does after compaction. */
  expire(): void {
    for (const w of this.#watchers) {
      writeEvent(w.res, 'ERROR', expired(this.#store.revision));
      w.res.end();
    }
    this.#watchers.clear();
  }

  /** A BOOKMARK at the current revision to watches that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.#watchers) {
      if (w.bookmarks) writeEvent(w.res, 'BOOKMARK', { kind: w.r.kind, apiVersion: apiVersionOf(w.r), metadata: { resourceVersion: String(this.#store.revision) } });
    }
  }
}

/** Selector enter/leave semantics of the apiserver cacher: enter → ADDED, leave → DELETED. */
function deliver(w: Watcher, e: StoreEvent): void {
  if (e.resource.group !== w.r.group || e.resource.plural !== w.r.plural) return;
  const now = w.matches(e.object);
  const before = e.prev !== undefined && w.matches(e.prev);
  if (e.type === 'ADDED' && now) writeEvent(w.res, 'ADDED', e.object);
  else if (e.type === 'DELETED' && before) writeEvent(w.res, 'DELETED', e.object);
  else if (e.type === 'MODIFIED') {
    if (now && before) writeEvent(w.res, 'MODIFIED', e.object);
    else if (now) writeEvent(w.res, 'ADDED', e.object);
    else if (before) writeEvent(w.res, 'DELETED', { ...e.object, metadata: { ...e.prev?.metadata, resourceVersion: e.object.metadata.resourceVersion } });
  }
}

function writeEvent(res: http.ServerResponse, type: string, object: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify({ type, object })}\n`);
}

function expired(rv: number, current?: number): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${rv} (${current ?? rv})`, reason: 'Expired', code: 410 };
}
