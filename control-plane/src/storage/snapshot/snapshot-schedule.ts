/**
 * Snapshots on a cron schedule (`nodelet server --snapshot-schedule-cron`, as k3s's
 * `--etcd-snapshot-schedule-cron`; @nodelet/base/cron schedules it with node-cron in the server's
 * time zone). Each tick takes one snapshot, then prunes to the retention; a tick never overlaps the
 * previous one, and a failure is logged and reported (an Event, by the caller) and never ends the
 * schedule. With several servers the caller runs the schedule only while this server holds the
 * snapshot Lease, so one snapshot is taken per tick.
 */
import { describeError, type Logger } from '@nodelet/base';
import { scheduleCron, type CronJobHandle } from '@nodelet/base/cron';
import type { SnapshotInfo } from './snapshots.js';

/** k3s's default: every 12 hours, at minute 0. */
export const DEFAULT_SNAPSHOT_SCHEDULE = '0 */12 * * *';
/** k3s's default retention. */
export const DEFAULT_SNAPSHOT_RETENTION = 5;

export interface SnapshotScheduleOptions {
  cron: string;
  /** IANA time zone; default the process's. */
  timezone?: string;
  /** Takes one snapshot. */
  take: () => Promise<SnapshotInfo & { path: string }>;
  /** Prunes to the retention; returns what it removed. */
  prune: () => Promise<string[]>;
  /** Called with each failed tick's error (the caller records an Event). */
  onFailure?: (err: unknown) => void | Promise<void>;
  log: Logger;
  /** Tests: accept a six-field (seconds) schedule. */
  allowSeconds?: boolean;
}

/** Starts the schedule; refuses a bad expression with the reason. */
export function startSnapshotSchedule(o: SnapshotScheduleOptions): CronJobHandle {
  return scheduleCron('--snapshot-schedule-cron', o.cron, async () => {
    try {
      const s = await o.take();
      const removed = await o.prune();
      o.log.info({ file: s.path, revision: s.revision, objects: s.objects, bytes: s.bytes, pruned: removed }, 'Scheduled snapshot saved');
    } catch (err) {
      o.log.error({ err: describeError(err) }, 'Scheduled snapshot failed');
      try {
        await o.onFailure?.(err);
      } catch (report) {
        o.log.warn({ err: describeError(report) }, 'Could not report the failed snapshot');
      }
    }
  }, { log: o.log, name: 'nodelet-snapshot', ...(o.timezone ? { timezone: o.timezone } : {}), ...(o.allowSeconds ? { allowSeconds: true } : {}) });
}
