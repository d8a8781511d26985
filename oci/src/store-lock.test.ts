import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { STORE_LOCK_FILE, withStoreLock } from './store-lock.js';

async function store(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-lock-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('writers of one store run one at a time; the lock file goes when they finish', async (t) => {
  const root = await store(t);
  const trace: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const firstIn = new Promise<void>((r) => (entered = r));
  const first = withStoreLock(root, async () => {
    trace.push('first in');
    entered();
    await held;
    trace.push('first out');
  });
  await firstIn; // started together, either writer may win the race for the file: let the first win it
  const second = withStoreLock(root, async () => void trace.push('second'));
  // The negative, proven rather than waited for: a writer that gives up at once finds the lock
  // held (by this process) and never runs; it polled at least once after the waiting writer did.
  await assert.rejects(withStoreLock(root, async () => void trace.push('refused'), { timeoutMs: 0 }), (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && err.message.includes(`locked by process ${process.pid}`));
  assert.deepEqual(trace, ['first in']);
  release();
  await Promise.all([first, second]);
  assert.deepEqual(trace, ['first in', 'first out', 'second']);
  assert.equal(existsSync(join(root, STORE_LOCK_FILE)), false);
});

test('a lock left by a dead process is taken over; a live holder makes waiters time out', async (t) => {
  const root = await store(t);
  const dead = spawnSync('true').pid!; // exited: its PID names no process (until reused)
  await writeFile(join(root, STORE_LOCK_FILE), `${dead}\n`);
  assert.equal(await withStoreLock(root, async () => 'ran', { timeoutMs: 2_000 }), 'ran');

  await writeFile(join(root, STORE_LOCK_FILE), `${process.pid}\n`);
  await assert.rejects(withStoreLock(root, async () => 'ran', { timeoutMs: 200 }), (err: Error) => hasCode(err, 'ERR_UNAVAILABLE') && new RegExp(`locked by process ${process.pid}`).test(err.message));
});
