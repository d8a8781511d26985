/**
 * The controller-manager's plumbing: shared informers (one list+watch per resource for all
 * controllers) and the worker loop every controller runs (client-go's processNextWorkItem):
 *
 *   informer handlers ──key──▶ WorkQueue ──get──▶ reconcile(key) ──ok──▶ forget (+ optional requeueAfter)
 *                                  ▲                    │ error
 *                                  └── addRateLimited ◀─┘
 *
 * Reconcile is level-triggered: it reads the latest cached state for the key, never the event.
 */
import { WorkQueue } from '@nodelet/api';
import { hasCode, isAbortError, linkAbort, type Clock, type Logger } from '@nodelet/base';

/** The controller manager's shared informers: one list+watch per resource for all controllers. */
export { InformerFactory as SharedInformers } from '@nodelet/api';

export interface ReconcileResult {
  /** Sync this key again after this long even without a change (time-based conditions). */
  requeueAfterMs?: number;
}

export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  /** Number of concurrent workers (default 2); one key is never processed by two at once. */
  readonly workers?: number;
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;
  /** Called once after informers synced, before workers start (e.g. periodic timers). */
  start?(signal: AbortSignal): void;
  /** Called once its workers have stopped: releases timers, handlers and writers. Idempotent. */
  close?(): void;
}

/** Runs `c`'s workers until `signal` aborts or its queue shuts down. */
export async function runController(c: Controller, signal: AbortSignal, logger: Logger): Promise<void> {
  const log = logger.child({ controller: c.name });
  const onAbort = (): void => c.queue.shutDown();
  signal.addEventListener('abort', onAbort, { once: true });
  c.start?.(signal);
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await c.queue.get();
      if (key === undefined) return;
      const link = linkAbort(signal, 60_000);
      try {
        const r = await c.reconcile(key, link.signal);
        c.queue.forget(key);
        if (r?.requeueAfterMs !== undefined) c.queue.addAfter(key, r.requeueAfterMs);
      } catch (err) {
        if (signal.aborted && isAbortError(err)) return;
        // A write lost to a newer version is normal with optimistic concurrency: the retry reads it.
        if (hasCode(err, 'ERR_CONFLICT')) log.debug({ key }, 'Reconcile conflicted, will retry');
        else log.warn({ err, key, requeues: c.queue.numRequeues(key) }, 'Reconcile failed, will retry');
        c.queue.addRateLimited(key);
      } finally {
        link.dispose();
        c.queue.done(key);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: c.workers ?? 2 }, () => worker()));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Controllers rate-limit failures from 5 ms up to 60 s (client-go's default tops at 1000 s, too slow for a lab). */
export function newQueue(clock: Clock): WorkQueue {
  return new WorkQueue({ clock, rateLimit: { initialMs: 5, maxMs: 60_000 } });
}
