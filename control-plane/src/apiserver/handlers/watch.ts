/**
 * WATCH, over HTTP or a WebSocket (watch-sink.ts, watch-websocket.ts): newline-delimited JSON
 * events, or length-prefixed protobuf WatchEvent frames when the client prefers protobuf and the
 * kind has a table (wire-media.ts).
 * Each event's bytes come from the server's WatchEventEncoder, shared by every watcher that sends
 * the same event (watch-encoding.ts). RV unset/0 → synthetic ADDED for the
 * current state first; RV=N → changes after N (from the watch cache, else a direct store watch;
 * compacted → one ERROR event with a 410 Expired Status). Selector transitions map to
 * ADDED/DELETED like the cacher. Bookmarks when asked; ends at timeoutSeconds or shutdown.
 *
 * Backpressure: the initial ADDED events wait for the client to drain the response. Live events
 * cannot wait (the cache fans them out to every watcher at once), so a watcher whose unsent bytes
 * pass `maxWatchBufferBytes` is cut off, like kube-apiserver closes an unresponsive watcher; its
 * client re-watches from the last resourceVersion it saw.
 */
import { encodeWatchFrame } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import type { RequestScope } from '../context.js';
import { compileFilter, exactFieldValue, MATCH_ALL, onlyExactFieldValue } from '../filter.js';
import { wantsTable } from '../media.js';
import type { ApiObject } from '../object.js';
import { includeObjectOf, tableOf } from '../respond.js';
import { listOptionsOf } from '../request-options.js';
import { badRequest, expired } from '../status.js';
import type { CacheEvent } from '../watch-cache.js';
import { WatchEventEncoder, type WatchEventType as EventType } from '../watch-encoding.js';
import { httpWatchSink, type WatchSink } from './watch-sink.js';
import { negotiateWireMedia, protobufBytes, PROTOBUF_WATCH_CONTENT_TYPE } from '../wire-media.js';

/** Encoder for servers whose context has none (tests that build a context by hand): encodes per watcher. */
const UNSHARED = new WatchEventEncoder({ share: false });

/** Serves the watch `s` asks for on `sink` (the HTTP response unless given); throws only before the stream starts. */
export async function handleWatch(s: RequestScope, sink: WatchSink = httpWatchSink(s.req, s.res)): Promise<void> {
  const { def, registry, cache } = s.served;
  const q = s.url.searchParams;
  const filter = compileFilter(def, q.get('labelSelector'), q.get('fieldSelector'));
  const inNamespace = (o: ApiObject): boolean => !s.namespace || o.metadata.namespace === s.namespace;
  const matches = (o: ApiObject | undefined): boolean => !!o && inNamespace(o) && filter(o);
  // A selector that is only the cache's trigger field (a kubelet's spec.nodeName=<node>) judges a
  // previous object by the value the cache already knows (CacheEvent.prevTrigger).
  const triggerOnly = cache?.triggerField ? onlyExactFieldValue(q.get('labelSelector'), q.get('fieldSelector'), cache.triggerField) : undefined;
  const o = listOptionsOf(s.url, true);
  let fromRevision = o.revision;
  const bookmarks = o.allowWatchBookmarks;
  const sendInitialEvents = o.sendInitialEvents === true;
  // Unset or 0 → the apiserver's default: 30 min, jittered so watches do not all end together.
  const timeoutMs = o.timeoutSeconds ? o.timeoutSeconds * 1000 : 1800_000 * (1 + Math.random());
  if (timeoutMs < 0) throw badRequest('timeoutSeconds must be a non-negative number');
  const table = wantsTable(s.req.headers.accept);
  const includeObject = includeObjectOf(s.url);
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  const media = table ? 'json' : negotiateWireMedia(s.req.headers.accept, apiVersion, def.kind).media;
  const encoder = s.ctx.watchEncoder ?? UNSHARED;

  await sink.start(media === 'protobuf' ? PROTOBUF_WATCH_CONTENT_TYPE : 'application/json');
  const done = new AbortController();
  const finish = (): void => done.abort();
  const offClose = sink.onClose(finish);
  const onShutdown = (): void => finish();
  s.ctx.shutdown.addEventListener('abort', onShutdown, { once: true });

  let firstTable = true;
  let lastRV = fromRevision;
  const writeBytes = (bytes: Buffer | string): void => {
    if (done.signal.aborted) return;
    sink.write(bytes);
    if (sink.buffered > s.ctx.maxWatchBufferBytes) {
      s.log.warn({ resource: def.plural, user: s.user.name, buffered: sink.buffered }, 'Closing unresponsive watcher');
      // Ending would queue behind what the client does not read: drop the connection instead.
      sink.drop();
      finish();
    }
  };
  /** A per-watcher event (Tables, bookmarks, errors). */
  const write = (type: EventType, object: Record<string, unknown>): void => {
    if (media === 'json') return writeBytes(JSON.stringify({ type, object }) + '\n');
    const inner = protobufBytes(object);
    if (inner) writeBytes(Buffer.from(encodeWatchFrame(type, inner)));
    else finish();
  };
  /** `shared`: the object is a watch cache event's, seen by other watchers too. */
  const emit = (type: EventType, obj: ApiObject, shared = false): void => {
    lastRV = Math.max(lastRV, Number(obj.metadata.resourceVersion ?? 0));
    if (table) {
      write(type, tableOf(def, [obj], s.ctx.now(), { resourceVersion: obj.metadata.resourceVersion }, { includeObject, withColumns: firstTable }));
      firstTable = false;
      return;
    }
    const bytes = encoder.encode(def, media, type, obj, shared);
    if (bytes) return writeBytes(bytes);
    // The protobuf table cannot carry this object: the stream's media type is fixed, so the
    // client is told to list again (the list answers JSON for it) rather than miss the event.
    s.log.warn({ resource: def.plural, name: obj.metadata.name }, 'Watch event has no protobuf form, sending Expired');
    write('ERROR', expired(`${def.kind} "${String(obj.metadata.name)}" cannot be sent as protobuf; list again`).toBody() as unknown as Record<string, unknown>);
    finish();
  };
  const bookmark = (extra?: Record<string, string>): void =>
    write('BOOKMARK', { kind: def.kind, apiVersion: def.group ? `${def.group}/${def.version}` : def.version, metadata: { resourceVersion: String(lastRV), ...(extra ? { annotations: extra } : {}) } });
  const fail = (err: unknown): void => {
    const status = hasCode(err, 'ERR_GONE') ? expired(`too old resource version: ${fromRevision} (${String(lastRV)})`) : undefined;
    if (status) write('ERROR', status.toBody() as unknown as Record<string, unknown>);
    finish();
  };
  const onEvent = (e: CacheEvent, shared: boolean): void => {
    if (e.revision <= fromRevision) return;
    const now = matches(e.object) && e.kind !== 'delete';
    // Without a selector the previous object (the same key, so the same namespace) is not
    // decoded: only whether there is one matters (watch-cache.ts decodes on first read).
    const before =
      e.hasPrev &&
      (filter === MATCH_ALL ? inNamespace(e.object) : triggerOnly !== undefined && e.prevTrigger !== undefined ? e.prevTrigger === triggerOnly && inNamespace(e.object) : matches(e.prev));
    if (e.kind === 'delete') {
      if (before) emit('DELETED', e.object, shared);
    } else if (now && (e.kind === 'create' || !e.hasPrev)) emit('ADDED', e.object, shared);
    else if (now && before) emit('MODIFIED', e.object, shared);
    else if (now) emit('ADDED', e.object, shared);
    else if (before) emit('DELETED', encoder.exitObject(e), shared);
    lastRV = Math.max(lastRV, e.revision);
  };

  const timers: NodeJS.Timeout[] = [setTimeout(finish, timeoutMs)];
  try {
    if (fromRevision === 0 || sendInitialEvents) {
      // Initial state: one ADDED per object, then changes after the list revision.
      const page = await registry.list({ namespace: s.namespace, filter });
      for (const o of page.items) {
        if (done.signal.aborted) break;
        emit('ADDED', o);
        if (sink.needsDrain) await sink.drained(done.signal);
      }
      fromRevision = Number(page.resourceVersion);
      lastRV = fromRevision;
      if (sendInitialEvents && bookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
    }
    // A selector pinning the cache's trigger field (a kubelet's spec.nodeName=<node>) is handed only that value's events.
    const trigger = cache.triggerField ? exactFieldValue(q.get('fieldSelector'), cache.triggerField) : undefined;
    let sub = await cache.subscribe(fromRevision, { onEvent: (e) => onEvent(e, true), onEnd: (err) => (err ? fail(err) : finish()) }, trigger);
    let direct: AbortController | undefined;
    if (!sub) {
      direct = new AbortController();
      const ac = direct;
      done.signal.addEventListener('abort', () => ac.abort(), { once: true });
      void (async () => {
        try {
          for await (const e of s.ctx.store.watch(registry.prefix(s.namespace), { afterRevision: fromRevision, signal: ac.signal })) {
            onEvent(
              e.type === 'DELETE'
                ? { revision: e.revision, kind: 'delete', object: registry.decode(e.kv, e.revision), prev: registry.decode(e.kv), hasPrev: true }
                : { revision: e.revision, kind: e.isCreate ? 'create' : 'update', object: registry.decode(e.kv), ...(e.prevKv ? { prev: registry.decode(e.prevKv) } : {}), hasPrev: e.prevKv !== undefined },
              false,
            );
          }
        } catch (err) {
          if (!ac.signal.aborted) fail(err);
        }
      })();
      sub = { close: () => ac.abort() };
    }
    if (bookmarks) {
      const every = Math.min(s.ctx.bookmarkIntervalMs, Math.max(timeoutMs - 2000, 1000));
      timers.push(setInterval(() => bookmark(), every));
    }
    await new Promise<void>((resolve) => (done.signal.aborted ? resolve() : done.signal.addEventListener('abort', () => resolve(), { once: true })));
    sub.close();
  } catch (err) {
    fail(err);
  } finally {
    for (const t of timers) clearTimeout(t);
    offClose();
    s.ctx.shutdown.removeEventListener('abort', onShutdown);
    sink.end();
  }
}

