// The snapshot schedule on real node-cron timers (a six-field, every-second schedule, which only
// tests may use): each tick takes one snapshot of a real SQLite store and prunes to the retention;
// a failed tick is reported and the next one runs; bad expressions are refused with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, pollUntil } from '@nodelet/base';
import { createTempSqliteStore } from '../testing/sqlite.js';
import { saveSqliteSnapshot } from './sqlite-snapshot.js';
import { startSnapshotSchedule } from './snapshot-schedule.js';
import { listSnapshots, pruneSnapshots } from './snapshots.js';
import { cleanups } from '@nodelet/base/testing';

test('every tick takes a snapshot and retention keeps exactly N; a failed tick is reported and the next one runs', { timeout: 30_000 }, async (t) => {
  const cleanup = cleanups(t);
  const store = createTempSqliteStore();
  cleanup(() => store.close());
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-snap-sched-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  await store.create('/registry/namespaces/default', new TextEncoder().encode('{}'));
  let ticks = 0;
  const failures: string[] = [];
  const sched = startSnapshotSchedule({
    cron: '* * * * * *', allowSeconds: true, log: noopLogger,
    take: async () => {
      ticks++;
      if (ticks === 2) throw new Error('disk full');
      // Distinct names even when two ticks fall in one millisecond's name: the tick's own time.
      return saveSqliteSnapshot({ dbPath: store.path, dir, server: 'lab-1', now: new Date(Date.now() + ticks) });
    },
    prune: () => pruneSnapshots(dir, { retention: 2 }),
    onFailure: (err) => void failures.push((err as Error).message),
  });
  cleanup(() => sched.close());
  assert.ok(sched.nextRun()!.getTime() - Date.now() <= 1_000);
  await pollUntil('five ticks', () => ticks >= 5, { timeoutMs: 20_000, intervalMs: 50 });
  await sched.close();
  assert.deepEqual(failures, ['disk full']);
  const good = (await listSnapshots(dir)).filter((s) => s.info);
  assert.equal(good.length, 2, 'retention 2 after four good ticks');
});

test('a bad schedule is refused with the flag and the reason', () => {
  assert.throws(() => startSnapshotSchedule({ cron: 'daily', take: async () => { throw new Error('no'); }, prune: async () => [], log: noopLogger }), /--snapshot-schedule-cron: "daily" has 1 field/);
});
