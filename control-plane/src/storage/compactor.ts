import { toDisposable, noopLogger, type Disposable, type Logger } from '@nodelet/base';
import type { Store } from './types.js';

export interface CompactorOptions {
  /** How often to compact. Default 5 minutes (kube-apiserver's --etcd-compaction-interval). */
  intervalMs?: number;
  /** Revisions of history to keep behind the current one. Default 1000 (as kine). */
  keepRevisions?: number;
  logger?: Logger;
}

type Compactable = Pick<Store, 'currentRevision' | 'compactedRevision' | 'compact'> & {
  /**
   * Several servers on one store: true when this one should compact in this interval (etcd's
   * `compact_rev_key` protocol, etcd-compaction-claim.ts). Absent: always compact.
   */
  claimCompaction?(): Promise<boolean>;
};

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
 * Runs `compactKeeping` every interval until disposed, in the intervals the store's
 * `claimCompaction` gives this process (with several servers on one etcd, one of them). A tick is skipped while the previous one
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
    (async () => ((await (store.claimCompaction?.() ?? true)) ? compactKeeping(store, keep) : undefined))()
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
