/**
 * The console's list-and-watch client, the browser's small informer (docs/console.md): lists a
 * collection, then watches it from the list's resourceVersion with `?watch=1` over a WebSocket
 * (one event per message, as kube-apiserver serves a watch to `Upgrade: websocket`), keeping a
 * map of the objects. WebSockets are not held to HTTP/1.1's six connections per origin, so the
 * page opens one per watch. A watch that ends is resumed from the last resourceVersion seen
 * (bookmarks included); a 410 Gone (as an ERROR event or as the watch request's status) means
 * that version was compacted away, so the collection is listed again. 401 and 403 are reported
 * and end the watch: retrying cannot change the answer.
 *
 * A browser's WebSocket does not say why a handshake was refused, so a socket that closes before
 * opening is asked again as a plain HTTP watch, whose status and message are the server's answer
 * (a 403, a 400 for a bad selector); one that is accepted there is closed at once and retried.
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

/** The subprotocol offered beside the token: the server echoes the one it is given (x/net/websocket). */
export const WATCH_PROTOCOL = 'watch.console.nodelet.io';

/** One watch from `rv`; returns the version to resume from, undefined to list again. */
async function watchOnce<T extends KObject>(o: WatchOptions<T>, items: Map<string, T>, rv: string): Promise<string | undefined> {
  const url = `${o.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`;
  const ws = o.api.webSocket(url, [WATCH_PROTOCOL]);
  let opened = false;
  const ended = await new Promise<{ rv: string | undefined } | { error: unknown }>((resolve) => {
    const finish = (r: { rv: string | undefined } | { error: unknown }): void => {
      o.signal.removeEventListener('abort', onAbort);
      ws.onopen = ws.onmessage = ws.onclose = null;
      // Closing a socket that is still connecting fails its handshake, which reports an error
      // after this close: a browser fires an error event, Node's `ws` (the tests' WebSocket)
      // throws it when nothing listens. Either way it is this watch's own doing: kept quiet.
      ws.onerror = () => undefined;
      if (ws.readyState <= 1) ws.close(1000);
      resolve(r);
    };
    const onAbort = (): void => finish({ rv });
    o.signal.addEventListener('abort', onAbort, { once: true });
    ws.onopen = () => {
      opened = true;
      o.onError(undefined);
    };
    ws.onerror = () => undefined; // the close event that follows decides
    // The server ends a watch with 1000 (timeoutSeconds): resumed at once. A dropped connection is
    // reported and retried after a pause; one that never opened is asked why below.
    ws.onclose = (ev: CloseEvent) => finish(opened && ev.code !== 1000 ? { error: new Error(`the watch's connection closed (${ev.code})`) } : { rv });
    ws.onmessage = (ev: MessageEvent) => {
      try {
        const e = JSON.parse(String(ev.data)) as WatchEvent<T>;
        if (e.type === 'ERROR') return finish(e.object.code === 410 ? { rv: undefined } : { error: new ApiError(e.object.code ?? 500, e.object.message ?? 'watch error') });
        rv = e.object.metadata?.resourceVersion ?? rv;
        if (e.type === 'BOOKMARK') return;
        if (e.type === 'DELETED') items.delete(keyOf(e.object));
        else items.set(keyOf(e.object), e.object);
        o.onChange([...items.values()]);
      } catch (err) {
        finish({ error: err });
      }
    };
  });
  if ('error' in ended) throw ended.error;
  if (!opened && !o.signal.aborted) await refusal(o, url);
  return ended.rv;
}

/** Why a WebSocket watch did not open: the same watch over HTTP, closed once it answers. */
async function refusal(o: WatchOptions<KObject>, url: string): Promise<never> {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  o.signal.addEventListener('abort', stop, { once: true });
  try {
    const res = await o.api.watch(url, ac.signal);
    if (!res.ok) throw await apiErrorOf(res);
    throw new Error('the watch\'s WebSocket closed before it opened');
  } finally {
    o.signal.removeEventListener('abort', stop);
    ac.abort();
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // An abort event never comes again for a signal that is already aborted.
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
