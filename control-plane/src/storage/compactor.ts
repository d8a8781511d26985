import { toDisposable, noopLogger, type Disposable, type Logger } from '@nodelet/base';
import type { Store } from './types.js';

export interface CompactorOptions {
  /** How often to compact. Default 5 minutes (kube-apiserver's --etcd-compaction-interval). */
  intervalMs?: number;
  /** Revisions of history to keep behind the current one. Default 1000 (as kine). */
  keepRevisions?: number;
  logger?: Logger;
}

type Compactable = Pick<Store, 'currentRevision' | 'compactedRevision' | 'compact'>;

/**
 * Compacts `store` to `current - keep` once, if that moves the compacted revision forward.
 * Returns the revision compacted to, or undefined when there was nothing to do.
 */
export async function compactKeeping(store: Compactable, keepRevisions: number): Promise<number | undefined> {
  const current = await store.currentRevision();
  const target = current - keepRevisions;
  if (target <= 0 || target <= (await store.compactedRevision())) return undefined;
  await store.compact(target);
  return target;
}

/**
 * Runs `compactKeeping` every interval until disposed. A tick is skipped while the previous one
 * still runs; failures are logged and retried on the next tick (compaction is an optimisation,
 * never a reason to stop serving).
 */
export function startCompactor(store: Compactable, opts: CompactorOptions = {}): Disposable {
  const log = opts.logger ?? noopLogger;
  const keep = opts.keepRevisions ?? 1000;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    compactKeeping(store, keep)
      .then((rev) => {
        if (rev !== undefined) log.debug({ revision: rev, keepRevisions: keep }, 'Background compaction done');
      })
      .catch((err: unknown) => log.warn({ err }, 'Background compaction failed'))
      .finally(() => {
        running = false;
      });
  }, opts.intervalMs ?? 300_000);
  timer.unref();
  return toDisposable(() => clearInterval(timer));
}
