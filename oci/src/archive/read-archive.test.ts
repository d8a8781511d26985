import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sha256, writeTarArchive, type ArchiveFiles } from '../testing/archives.js';
import { readArchive } from './read-archive.js';

/**
 * Counts 'abort' listeners per signal while `fn` runs: the most any one signal held at once, and
 * what the caller's signal still holds at the end.
 */
async function countAbortListeners(t: { mock: typeof test.mock }, fn: () => Promise<void>): Promise<{ peak: number }> {
  const held = new Map<EventTarget, number>();
  let peak = 0;
  const add = EventTarget.prototype.addEventListener;
  const remove = EventTarget.prototype.removeEventListener;
  t.mock.method(EventTarget.prototype, 'addEventListener', function (this: EventTarget, type: string, ...rest: unknown[]) {
    if (type === 'abort' && this instanceof AbortSignal) {
      held.set(this, (held.get(this) ?? 0) + 1);
      peak = Math.max(peak, held.get(this)!);
    }
    return (add as (...a: unknown[]) => void).call(this, type, ...rest);
  });
  t.mock.method(EventTarget.prototype, 'removeEventListener', function (this: EventTarget, type: string, ...rest: unknown[]) {
    if (type === 'abort' && this instanceof AbortSignal && held.has(this)) held.set(this, Math.max(0, held.get(this)! - 1));
    return (remove as (...a: unknown[]) => void).call(this, type, ...rest);
  });
  await fn();
  return { peak };
}

test('an archive of many small members holds one abort listener for them all, and none once read', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-read-archive-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files: ArchiveFiles = new Map();
  for (let i = 0; i < 40; i++) {
    const b = Buffer.from(`blob ${i}\n`);
    files.set(`blobs/sha256/${sha256(b).slice('sha256:'.length)}`, b);
  }
  const archive = join(dir, 'a.tar');
  await writeTarArchive(archive, files);
  const staging = await mkdtemp(join(dir, 'staging-'));
  const caller = new AbortController();
  let read!: Awaited<ReturnType<typeof readArchive>>;
  const { peak } = await countAbortListeners(t, async () => {
    read = await readArchive(archive, staging, caller.signal);
  });
  assert.equal(read.files.size, 40);
  // Before: two per member in flight (the copy's pipeline and its race with the abort) on one
  // signal, past the 10 at which node warns of a leak.
  assert.ok(peak <= 2, `one signal held ${peak} abort listeners at once`);
  t.mock.restoreAll();
});

test('aborting the read destroys the members in flight: it rejects with the abort, nothing left waiting', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-read-archive-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files: ArchiveFiles = new Map();
  for (let i = 0; i < 40; i++) files.set(`m/${i}`, Buffer.alloc(64 * 1024, i));
  const archive = join(dir, 'a.tar');
  await writeTarArchive(archive, files);
  const staging = await mkdtemp(join(dir, 'staging-'));
  const caller = new AbortController();
  const reading = readArchive(archive, staging, caller.signal);
  caller.abort(new DOMException('stop', 'AbortError'));
  await assert.rejects(reading, { name: 'AbortError' });
});
