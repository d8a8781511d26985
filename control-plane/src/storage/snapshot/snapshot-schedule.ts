/**
 * Snapshots on a cron schedule (`nodelet server --snapshot-schedule-cron`, as k3s's
 * `--etcd-snapshot-schedule-cron`), scheduled by node-cron in the server's time zone. Each tick
 * takes one snapshot, then prunes to the retention; a tick never overlaps the previous one, and a
 * failure is logged and reported (an Event, by the caller) and never ends the schedule. With
 * several servers the caller runs the schedule only while this server holds the snapshot Lease,
 * so one snapshot is taken per tick.
 */
import cron, { type ScheduledTask } from 'node-cron';
import { AgentError, describeError, type Logger } from '@nodelet/base';
import type { SnapshotInfo } from './snapshots.js';

/** k3s's default: every 12 hours, at minute 0. */
export const DEFAULT_SNAPSHOT_SCHEDULE = '0 */12 * * *';
/** k3s's default retention. */
export const DEFAULT_SNAPSHOT_RETENTION = 5;

/**
 * Checks a schedule flag's value: five fields (minute hour day-of-month month day-of-week), each as
 * cron reads it. Returns the error message, or undefined when it is good. `allowSeconds` accepts
 * node-cron's six-field form (a leading seconds field), for tests only.
 */
export function cronProblem(expr: string, o: { allowSeconds?: boolean } = {}): string | undefined {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5 && !(o.allowSeconds && fields.length === 6)) {
    return `"${expr}" has ${fields.length} field${fields.length === 1 ? '' : 's'}; a schedule has 5: minute hour day-of-month month day-of-week, e.g. "0 */12 * * *"`;
  }
  const v = cron.validateDetailed(expr);
  if (!v.valid) return `"${expr}" is not a valid cron schedule: ${v.errors.map((e) => `${e.field}${e.value !== undefined ? ` "${e.value}"` : ''}: ${e.message}`).join('; ')}`;
  return undefined;
}

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

export interface SnapshotSchedule {
  /** When the next tick is due. */
  nextRun(): Date | null;
  /** Stops scheduling and waits for a tick in progress. */
  close(): Promise<void>;
}

/** Starts the schedule; refuses a bad expression with the reason. */
export function startSnapshotSchedule(o: SnapshotScheduleOptions): SnapshotSchedule {
  const problem = cronProblem(o.cron, { allowSeconds: o.allowSeconds });
  if (problem) throw new AgentError('ERR_INVALID_ARGUMENT', `--snapshot-schedule-cron: ${problem}`);
  let running: Promise<void> | undefined;
  const tick = async (): Promise<void> => {
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
  };
  const task: ScheduledTask = cron.schedule(o.cron, async () => {
    running = tick();
    await running;
  }, { noOverlap: true, name: 'nodelet-snapshot', logger: cronLogger(o.log), ...(o.timezone ? { timezone: o.timezone } : {}) });
  return {
    nextRun: () => task.getNextRun(),
    close: async () => {
      await task.destroy();
      await running;
    },
  };
}

/** node-cron's own messages (a missed or overlapping tick) into the server's structured log. */
function cronLogger(log: Logger): { info(m: string): void; warn(m: string): void; error(m: string | Error, err?: Error): void; debug(m: string | Error, err?: Error): void } {
  const text = (m: string | Error, err?: Error): string => `${m instanceof Error ? m.message : m}${err ? `: ${err.message}` : ''}`;
  return {
    info: (m) => log.info({ scheduler: 'node-cron' }, m),
    warn: (m) => log.warn({ scheduler: 'node-cron' }, m),
    error: (m, err) => log.error({ scheduler: 'node-cron' }, text(m, err)),
    debug: (m, err) => log.debug({ scheduler: 'node-cron' }, text(m, err)),
  };
}
