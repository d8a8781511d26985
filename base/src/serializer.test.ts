import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Semaphore } from './serializer.js';

test('Semaphore: a waiter whose signal aborts leaves the queue at once; the others keep their order', async () => {
  const sem = new Semaphore(1);
  let release!: () => void;
  const holding = sem.use(() => new Promise<void>((r) => (release = r)));
  const ran: string[] = [];
  const leaving = new AbortController();
  const aborted = sem.use(async () => void ran.push('aborted'), leaving.signal);
  const next = sem.use(async () => void ran.push('next'));
  leaving.abort(new Error('pod deleted'));
  await assert.rejects(aborted, /pod deleted/);
  release();
  await Promise.all([holding, next]);
  assert.deepEqual(ran, ['next']);
  await assert.rejects(sem.use(async () => 'x', AbortSignal.abort(new Error('already'))), /already/);
  assert.equal(await sem.use(async () => 'free'), 'free', 'no permit was lost');
});
