import { AgentError, Wakeup, isAbortError, type Logger } from '@nodelet/base';
import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import type { KeyValue, WatchEvent } from '../types.js';

export interface EtcdWatchDeps {
  client: Etcd3;
  /** Full etcd key prefix (store prefix + caller's prefix). */
  prefix: Buffer;
  afterRevision: number;
  signal: AbortSignal;
  toKv(kv: IKeyValue): KeyValue;
  keyOf(raw: Buffer): string;
  /** Called when etcd cancels the watch: returns the error to raise (ERR_GONE after compaction). */
  explainCancel(err: Error, nextRevision: number): Promise<unknown>;
  log: Logger;
  /** True once the store is closed (a watch must not start on a closed client: it would retry forever). */
  closed(): boolean;
  /** Registers an abort hook so closing the store ends this watch; returns the unregister function. */
  track(fail: (err: unknown) => void): () => void;
}

const EMPTY = new Uint8Array(0);

function toEvents(res: IWatchResponse, deps: EtcdWatchDeps): WatchEvent[] {
  return res.events.map((ev): WatchEvent => {
    const revision = Number(ev.kv.mod_revision);
    if (ev.type === 'Delete') {
      // etcd's DELETE kv is a bare tombstone; the value lives in prev_kv (requested with prevKv).
      const last = ev.prev_kv
        ? deps.toKv(ev.prev_kv)
        : { key: deps.keyOf(ev.kv.key), value: EMPTY, createRevision: 0, modRevision: 0 };
      return { type: 'DELETE', kv: last, prevKv: last, revision, isCreate: false };
    }
    const kv = deps.toKv(ev.kv);
    const isCreate = kv.createRevision === kv.modRevision;
    const e: WatchEvent = { type: 'PUT', kv, revision, isCreate };
    if (!isCreate && ev.prev_kv) e.prevKv = deps.toKv(ev.prev_kv);
    return e;
  });
}

/**
 * One etcd watch (`start_revision = afterRevision + 1`, prev_kv) as an async iterator. etcd3
 * multiplexes every watcher of a client on one gRPC stream and re-attaches them, from the last
 * revision seen, after a dropped connection; a watch etcd itself cancels (compaction) ends the
 * iterator with the error `explainCancel` returns.
 */
export async function* etcdWatch(deps: EtcdWatchDeps): AsyncGenerator<WatchEvent> {
  const queue: WatchEvent[] = [];
  const wake = new Wakeup();
  let failure: unknown;
  let canceledByServer = false;
  let delivered = deps.afterRevision;
  const fail = (err: unknown): void => {
    failure ??= err;
    wake.notify();
  };
  let watcher: Watcher | undefined;
  let stopping: Promise<void> | undefined;
  // Detach from etcd as soon as the watch is abandoned (abort, store close), even while the
  // consumer is not inside next(): a suspended generator would otherwise keep it alive.
  const stop = (): Promise<void> => {
    // A server-canceled watcher is already detached; cancelling it again would wait forever.
    stopping ??= watcher && !canceledByServer
      ? Promise.race([watcher.cancel(), new Promise<void>((r) => setTimeout(r, 2000).unref())]).catch(() => {}) // detaching an abandoned watch: nobody is left to tell
      : Promise.resolve();
    return stopping;
  };
  const untrack = deps.track((err) => {
    fail(err);
    void stop();
  });
  const onAbort = (): void => void stop();
  deps.signal.addEventListener('abort', onAbort, { once: true });
  try {
    deps.signal.throwIfAborted();
    if (deps.closed()) throw closedError();
    watcher = deps.client
      .watch()
      .prefix(deps.prefix)
      .startRevision(String(deps.afterRevision + 1))
      .withPreviousKV()
      .watcher();
    watcher.on('data', (res: IWatchResponse) => {
      queue.push(...toEvents(res, deps));
      wake.notify();
    });
    watcher.on('disconnected', (err: Error) => deps.log.warn({ err }, 'Etcd watch disconnected; reconnecting'));
    watcher.on('error', (err: Error) => {
      canceledByServer = true;
      const next = (queue.at(-1)?.revision ?? delivered) + 1;
      deps.explainCancel(err, next).then(fail, fail);
    });
    while (!deps.signal.aborted) {
      const ev = queue.shift();
      if (ev) {
        delivered = ev.revision;
        yield ev;
        continue;
      }
      if (failure !== undefined) throw failure;
      try {
        await wake.wait(deps.signal);
      } catch (err) {
        if (isAbortError(err)) return;
        throw err;
      }
    }
  } finally {
    untrack();
    deps.signal.removeEventListener('abort', onAbort);
    await stop();
  }
}

export function closedError(): AgentError {
  return new AgentError('ERR_UNAVAILABLE', 'storage is closed');
}
