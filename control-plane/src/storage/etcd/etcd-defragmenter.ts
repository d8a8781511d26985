/**
 * The server's scheduled defragmentation (`--etcd-defrag-schedule-cron`, or the older
 * `--etcd-defrag-interval`; off by default). Compaction
 * frees revisions inside etcd's database file but never shrinks the file; defragmenting rewrites
 * it. A member answers nothing while it defragments, so members go one at a time
 * (etcd-maintenance.ts) and a run never overlaps the previous one. Each server on the same etcd
 * would defragment on its own schedule: enable it on one server (docs/ha.md).
 */
import { noopLogger, toDisposable, type Disposable, type Logger } from '@nodelet/base';
import { scheduleCron } from '@nodelet/base/cron';
import { defragmentEtcd, type EtcdTarget } from './etcd-maintenance.js';

/** When to defragment: a fixed interval, or a cron schedule (node-cron, the server's time zone). */
export type DefragSchedule = { intervalMs: number } | { cron: string; /** Tests: six fields (seconds). */ allowSeconds?: boolean };

export type DefragmenterOptions = DefragSchedule & {
  logger?: Logger;
  /** The defragmentation to run (tests); default {@link defragmentEtcd}. */
  defragment?: (t: EtcdTarget, o: { logger: Logger; signal: AbortSignal }) => Promise<unknown>;
};

/** Defragments every member of `target` on the schedule until disposed; failures are logged and retried next time. */
export function startDefragmenter(target: EtcdTarget, o: DefragmenterOptions): Disposable {
  const log = o.logger ?? noopLogger;
  const run = o.defragment ?? defragmentEtcd;
  const stop = new AbortController();
  let running = false;
  const tick = (): void => {
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
  };
  if ('cron' in o) {
    const job = scheduleCron('--etcd-defrag-schedule-cron', o.cron, async () => tick(), { log, name: 'etcd-defrag', ...(o.allowSeconds ? { allowSeconds: true } : {}) });
    return toDisposable(() => {
      stop.abort();
      void job.close();
    });
  }
  const timer = setInterval(tick, o.intervalMs);
  timer.unref();
  return toDisposable(() => {
    stop.abort();
    clearInterval(timer);
  });
}
