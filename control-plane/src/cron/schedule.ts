/**
 * CronJob schedules: the syntax kube-controller-manager accepts (robfig/cron's standard parser:
 * five fields, the `@yearly`… `@hourly` descriptors, an optional `TZ=`/`CRON_TZ=` prefix) and
 * the times it yields in a time zone, computed with cron-parser. Pure; no timers.
 *
 * Differences from robfig/cron that remain: `@every <duration>` is not supported, and a time
 * that does not exist in the zone (the hour skipped when daylight saving time starts) runs at
 * the same wall-clock offset after the jump instead of being skipped.
 */
import { CronExpressionParser } from 'cron-parser';
import { AgentError } from '@nodelet/base';

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

export interface CronSchedule {
  /** The expression without a TZ prefix, descriptors expanded. */
  readonly expression: string;
  /** IANA zone the fields are read in; undefined = the process's local zone (upstream: the controller's). */
  readonly timeZone: string | undefined;
  /** The first activation strictly after `afterMs` (epoch ms), or undefined when there is none. */
  next(afterMs: number): number | undefined;
}

/**
 * Parses `schedule` as the CronJob controller does (`timeZone` applies when the schedule has no
 * TZ prefix of its own). Throws AgentError ERR_INVALID_ARGUMENT with robfig-like messages for
 * the common mistakes (field count, unknown descriptor) and cron-parser's otherwise.
 */
export function parseCronSchedule(schedule: string, timeZone?: string): CronSchedule {
  let spec = schedule.trim();
  if (spec === '') throw new AgentError('ERR_INVALID_ARGUMENT', 'empty spec string');
  let zone = timeZone;
  const tz = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(spec);
  if (tz) {
    zone = tz[1];
    spec = tz[2]!.trim();
  }
  if (zone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
    } catch {
      throw new AgentError('ERR_INVALID_ARGUMENT', `provided bad location ${zone}: unknown time zone ${zone}`);
    }
  }
  if (spec.startsWith('@')) {
    const expanded = DESCRIPTORS[spec];
    if (!expanded) throw new AgentError('ERR_INVALID_ARGUMENT', `unrecognized descriptor: ${spec}`);
    spec = expanded;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== 5) throw new AgentError('ERR_INVALID_ARGUMENT', `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const options = (currentDate: Date) => ({ currentDate, ...(zone ? { tz: zone } : {}) });
  try {
    CronExpressionParser.parse(spec, options(new Date(0)));
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', err instanceof Error ? err.message : String(err), { cause: err });
  }
  return {
    expression: spec,
    timeZone: zone,
    next(afterMs) {
      try {
        // cron-parser's next() is strictly after currentDate at second granularity.
        return CronExpressionParser.parse(spec, options(new Date(afterMs))).next().getTime();
      } catch {
        return undefined;
      }
    },
  };
}

export type MissedSchedules = 'none' | 'few' | 'many';

export interface MostRecent {
  /** lastScheduleTime, or the creation time, raised to now − startingDeadlineSeconds when asked. */
  earliest: number;
  /** The latest activation at or before now after `earliest`, if any. */
  mostRecent?: number;
  missed: MissedSchedules;
  /** Set when two consecutive activations are less than a second apart (an impossible date). */
  error?: string;
}

/** More missed activations than this are reported as TooManyMissedTimes (upstream's 100). */
export const MAX_MISSED_SCHEDULES = 100;

/**
 * Upstream `mostRecentScheduleTime`: from the earliest time a Job may still be owed, how many
 * activations were missed and which is the latest one due by `now`. The count is the upstream
 * approximation (elapsed / period + 1), so a huge backlog costs no iteration.
 */
export function mostRecentScheduleTime(
  s: CronSchedule,
  o: { creationMs: number; lastScheduleMs?: number; startingDeadlineSeconds?: number; nowMs: number; includeStartingDeadline: boolean },
): MostRecent {
  let earliest = o.lastScheduleMs ?? o.creationMs;
  if (o.includeStartingDeadline && o.startingDeadlineSeconds !== undefined) {
    earliest = Math.max(earliest, o.nowMs - o.startingDeadlineSeconds * 1000);
  }
  const t1 = s.next(earliest);
  if (t1 === undefined || o.nowMs < t1) return { earliest, missed: 'none' };
  const t2 = s.next(t1);
  if (t2 === undefined || o.nowMs < t2) return { earliest, mostRecent: t1, missed: 'none' };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) return { earliest, missed: 'none', error: 'time difference between two schedules is less than 1 second' };
  const elapsed = Math.floor((o.nowMs - t1) / 1000);
  const missedCount = Math.floor(elapsed / between) + 1;
  let mostRecent: number | undefined;
  const potentialEarliest = t1 + (missedCount - 2) * between * 1000;
  for (let t = s.next(potentialEarliest); t !== undefined && t <= o.nowMs; t = s.next(t)) mostRecent = t;
  const missed: MissedSchedules = missedCount > MAX_MISSED_SCHEDULES ? 'many' : missedCount > 0 ? 'few' : 'none';
  return { earliest, mostRecent, missed };
}

/** Upstream nextScheduleTimeDuration: how long until the next activation, plus 100 ms for clock skew. */
export function nextScheduleDelayMs(
  s: CronSchedule,
  o: { creationMs: number; lastScheduleMs?: number; startingDeadlineSeconds?: number; nowMs: number },
): number | undefined {
  const r = mostRecentScheduleTime(s, { ...o, includeStartingDeadline: false });
  let from: number;
  if (r.error) from = o.nowMs;
  else if (r.mostRecent !== undefined) from = r.mostRecent;
  else from = r.missed === 'none' ? r.earliest : o.nowMs;
  const next = s.next(from);
  return next === undefined ? undefined : next + 100 - o.nowMs;
}
