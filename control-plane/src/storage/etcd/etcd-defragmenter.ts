/**
 * The server's scheduled defragmentation (`--etcd-defrag-interval`, off by default). Compaction
 * frees revisions inside etcd's database file but never shrinks the file; defragmenting rewrites
 * it. A member answers nothing while it defragments, so members go one at a time
 * (etcd-maintenance.ts) and a run never overlaps the previous one. Each server on the same etcd
 * would defragment on its own schedule: enable it on one server (docs/ha.md).
 */
import { noopLogger, toDisposable, type Disposable, type Logger } from '@nodelet/base';
import { defragmentEtcd, type EtcdTarget } from './etcd-maintenance.js';

export interface DefragmenterOptions {
  intervalMs: number;
  logger?: Logger;
  /** The defragmentation to run (tests); default {@link defragmentEtcd}. */
  defragment?: (t: EtcdTarget, o: { logger: Logger; signal: AbortSignal }) => Promise<unknown>;
}

/** Defragments every member of `target` each `intervalMs` until disposed; failures are logged and retried next time. */
export function startDefragmenter(target: EtcdTarget, o: DefragmenterOptions): Disposable {
  const log = o.logger ?? noopLogger;
  const run = o.defragment ?? defragmentEtcd;
  const stop = new AbortController();
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    run(target, { logger: log, signal: stop.signal })
      .then(() => log.info({ members: target.endpoints.length }, 'Scheduled etcd defragmentation done'))
      .catch((err: unknown) => {
        if (!stop.signal.aborted) log.warn({ err }, 'Scheduled etcd defragmentation failed');
      })
      .finally(() => {
        running = false;
      });
  }, o.intervalMs);
  timer.unref();
  return toDisposable(() => {
    stop.abort();
    clearInterval(timer);
  });
}
