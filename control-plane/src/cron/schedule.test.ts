import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { MAX_MISSED_SCHEDULES, mostRecentScheduleTime, nextScheduleDelayMs, parseCronSchedule } from './schedule.js';

const at = (s: string): number => Date.parse(s);
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

test('standard syntax, descriptors and the robfig field count', () => {
  const every = parseCronSchedule('*/1 * * * *', 'UTC');
  assert.equal(iso(every.next(at('2026-01-01T00:00:30Z'))), '2026-01-01T00:01:00.000Z');
  assert.equal(iso(every.next(at('2026-01-01T00:01:00Z'))), '2026-01-01T00:02:00.000Z', 'strictly after');
  assert.equal(iso(parseCronSchedule('@hourly', 'UTC').next(at('2026-01-01T00:30:00Z'))), '2026-01-01T01:00:00.000Z');
  assert.equal(iso(parseCronSchedule('@midnight', 'UTC').next(at('2026-01-01T00:30:00Z'))), '2026-01-02T00:00:00.000Z');
  assert.equal(iso(parseCronSchedule('@weekly', 'UTC').next(at('2026-01-01T00:00:00Z'))), '2026-01-04T00:00:00.000Z');
  const bad = (s: string, re: RegExp): void => {
    assert.throws(() => parseCronSchedule(s), (e: Error) => hasCode(e, 'ERR_INVALID_ARGUMENT') && re.test(e.message), s);
  };
  bad('* * * * * *', /^expected exactly 5 fields, found 6: \[\* \* \* \* \* \*\]$/);
  bad('@fortnightly', /^unrecognized descriptor: @fortnightly$/);
  bad('61 * * * *', /61/);
  bad('', /empty spec string/);
  bad('TZ=Mars/Base 0 * * * *', /unknown time zone Mars\/Base/);
});

test('time zones: the timeZone field, and TZ=/CRON_TZ= prefixes overriding it', () => {
  // 09:00 in Tokyo (UTC+9) is 00:00 UTC; in New York in January (UTC−5) 14:00 UTC.
  assert.equal(iso(parseCronSchedule('0 9 * * *', 'Asia/Tokyo').next(at('2026-01-01T01:00:00Z'))), '2026-01-02T00:00:00.000Z');
  const ny = parseCronSchedule('CRON_TZ=America/New_York 0 9 * * *', 'Asia/Tokyo');
  assert.equal(ny.timeZone, 'America/New_York');
  assert.equal(iso(ny.next(at('2026-01-01T00:00:00Z'))), '2026-01-01T14:00:00.000Z');
  // Across the switch to summer time (2026-03-08 in New York) the UTC hour moves, the local one does not.
  assert.equal(iso(parseCronSchedule('TZ=America/New_York 0 9 * * *').next(at('2026-03-08T00:00:00Z'))), '2026-03-08T13:00:00.000Z');
});

test('most recent activation, missed counts, startingDeadlineSeconds and the 100-miss rule', () => {
  const s = parseCronSchedule('*/1 * * * *', 'UTC');
  const created = at('2026-01-01T00:00:10Z');
  // Not yet due.
  assert.deepEqual(mostRecentScheduleTime(s, { creationMs: created, nowMs: at('2026-01-01T00:00:50Z'), includeStartingDeadline: true }), { earliest: created, missed: 'none' });
  // One due.
  assert.equal(iso(mostRecentScheduleTime(s, { creationMs: created, nowMs: at('2026-01-01T00:01:05Z'), includeStartingDeadline: true }).mostRecent), '2026-01-01T00:01:00.000Z');
  // Several missed: the latest one is run, counted as a few.
  const few = mostRecentScheduleTime(s, { creationMs: created, lastScheduleMs: at('2026-01-01T00:01:00Z'), nowMs: at('2026-01-01T00:05:30Z'), includeStartingDeadline: true });
  assert.deepEqual([iso(few.mostRecent), few.missed], ['2026-01-01T00:05:00.000Z', 'few']);
  // A controller down for a day: more than 100 misses.
  const many = mostRecentScheduleTime(s, { creationMs: created, nowMs: at('2026-01-02T00:00:30Z'), includeStartingDeadline: true });
  assert.deepEqual([iso(many.mostRecent), many.missed], ['2026-01-02T00:00:00.000Z', 'many']);
  assert.equal(MAX_MISSED_SCHEDULES, 100);
  // startingDeadlineSeconds limits how far back it looks: no backlog counted beyond it.
  const bounded = mostRecentScheduleTime(s, { creationMs: created, startingDeadlineSeconds: 200, nowMs: at('2026-01-02T00:00:30Z'), includeStartingDeadline: true });
  assert.deepEqual([iso(bounded.mostRecent), bounded.missed], ['2026-01-02T00:00:00.000Z', 'few']);
  // Next wake-up: the next activation after the last scheduled one, plus 100 ms.
  assert.equal(nextScheduleDelayMs(s, { creationMs: created, lastScheduleMs: at('2026-01-01T00:01:00Z'), nowMs: at('2026-01-01T00:01:20Z') }), 40_100);
});
