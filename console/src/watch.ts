/**
 * The console's list-and-watch client, the browser's small informer (docs/console.md): lists a
 * collection, then watches it from the list's resourceVersion with `?watch=1` (JSON lines over a
 * streamed fetch), keeping a map of the objects. A watch that ends is resumed from the last
 * resourceVersion seen (bookmarks included); a 410 Gone (as an ERROR event or as the watch
 * request's status) means that version was compacted away, so the collection is listed again.
 * 401 and 403 are reported and end the watch: retrying cannot change the answer.
 */
import { ApiError, apiErrorOf, type Api } from './api.js';

/** The metadata the client reads from each object. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** An object the API serves. */
export interface KObject {
  metadata: ObjectMeta;
}

export interface WatchOptions<T extends KObject> {
  api: Api;
  /** The collection's path, e.g. /api/v1/namespaces/default/pods (no query). */
  path: string;
  /** Called with every object after each change (a new array each time). */
  onChange(items: T[]): void;
  /** Called with the server's message when a call fails, and with undefined once it works again. */
  onError(message: string | undefined): void;
  signal: AbortSignal;
  /** Wait before retrying after a network failure or a 5xx (default 1000 ms). */
  retryMs?: number;
}

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T & { code?: number; message?: string };
}

const keyOf = (o: KObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** Lists and watches until `signal` aborts or the server refuses (401/403); resolves then. */
export async function listAndWatch<T extends KObject>(o: WatchOptions<T>): Promise<void> {
  const retryMs = o.retryMs ?? 1000;
  const items = new Map<string, T>();
  let rv: string | undefined;
  while (!o.signal.aborted) {
    try {
      if (rv === undefined) {
        const list = (await o.api.get(o.path, o.signal)) as { metadata?: { resourceVersion?: string }; items?: T[] };
        items.clear();
        for (const it of list.items ?? []) items.set(keyOf(it), it);
        rv = list.metadata?.resourceVersion ?? '0';
        o.onError(undefined);
        o.onChange([...items.values()]);
      }
      rv = await watchOnce(o, items, rv);
    } catch (err) {
      if (o.signal.aborted) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        o.onError(err.message);
        return;
      }
      if (err instanceof ApiError && err.status === 410) {
        rv = undefined;
        continue;
      }
      o.onError(err instanceof Error ? err.message : String(err));
      await sleep(retryMs, o.signal);
    }
  }
}

/** One watch request from `rv`; returns the version to resume from, undefined to list again. */
async function watchOnce<T extends KObject>(o: WatchOptions<T>, items: Map<string, T>, rv: string): Promise<string | undefined> {
  const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`;
  const res = await o.api.watch(`${o.path}?${query}`, o.signal);
  if (!res.ok) throw await apiErrorOf(res);
  o.onError(undefined);
  if (!res.body) return rv;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return rv;
    buf += value;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const ev = JSON.parse(line) as WatchEvent<T>;
      if (ev.type === 'ERROR') {
        await reader.cancel();
        if (ev.object.code === 410) return undefined;
        throw new ApiError(ev.object.code ?? 500, ev.object.message ?? 'watch error');
      }
      rv = ev.object.metadata?.resourceVersion ?? rv;
      if (ev.type === 'BOOKMARK') continue;
      if (ev.type === 'DELETED') items.delete(keyOf(ev.object));
      else items.set(keyOf(ev.object), ev.object);
      o.onChange([...items.values()]);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
