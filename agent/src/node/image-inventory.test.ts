/**
 * The image list on the fake clock, with ListImages as an injected function: a read at once, then
 * every 30 s and when triggered; a change (and only a change) is announced; a failed read keeps
 * the last list.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, pollUntil } from '@nodelet/base';
import { FakeClock, RecordingLogger } from '@nodelet/base/testing';
import { IMAGE_LIST_PERIOD_MS, ImageInventory } from './image-inventory.js';
import type { ListedImage } from './node-images.js';

const img = (id: string, size: number): ListedImage => ({ id, size: String(size), repoTags: [`r/${id}:1`], repoDigests: [] });

function world(t: { after(fn: () => unknown): void }) {
  const clock = new FakeClock();
  const log = new RecordingLogger();
  const stop = new AbortController();
  let listed: ListedImage[] = [];
  let failWith: Error | undefined;
  let reads = 0;
  let changes = 0;
  const inventory = new ImageInventory({
    images: {
      listImages: async () => {
        reads++;
        if (failWith) throw failWith;
        return { images: listed.map((i) => ({ ...i, uid: null, username: '', spec: null, pinned: false })) };
      },
    },
    clock,
    log,
    onChange: () => changes++,
  });
  let running: Promise<void> | undefined;
  t.after(async () => {
    stop.abort();
    await running;
  });
  /** The job has finished a read and armed the next period. */
  const armed = (): Promise<unknown> => pollUntil('the next read armed', () => clock.timerDelays().includes(IMAGE_LIST_PERIOD_MS), { timeoutMs: 10_000, intervalMs: 2 });
  return {
    clock, log, stop, inventory, armed,
    start: () => (running = inventory.run(stop.signal)),
    stopped: () => running,
    list: (l: ListedImage[]) => (listed = l),
    fail: (e: Error | undefined) => (failWith = e),
    reads: () => reads,
    changes: () => changes,
  };
}

test('image list: read at once, then every 30 s; the same images in another order are no change', async (t) => {
  const w = world(t);
  w.list([img('a', 1), img('b', 2)]);
  void w.start();
  await w.armed();
  assert.equal(w.reads(), 1);
  assert.deepEqual(w.inventory.current.map((i) => i.id), ['a', 'b']);
  assert.equal(w.changes(), 1, 'the first list is a change from none');
  w.list([img('b', 2), img('a', 1)]);
  await w.clock.advanceAsync(IMAGE_LIST_PERIOD_MS - 1);
  assert.equal(w.reads(), 1, 'nothing before the period is up');
  await w.clock.advanceAsync(1);
  await w.armed();
  assert.equal(w.reads(), 2);
  assert.equal(w.changes(), 1, 'reordered: not a change');
});

test('image list: trigger() reads at once (a pull, an image GC); a change is announced', async (t) => {
  const w = world(t);
  void w.start();
  await w.armed();
  assert.equal(w.changes(), 0, 'an empty runtime: nothing changed');
  w.list([img('new', 5)]);
  w.inventory.trigger();
  await w.armed();
  assert.equal(w.reads(), 2);
  assert.equal(w.clock.monotonic(), 0, 'no period waited for');
  assert.equal(w.changes(), 1);
  assert.deepEqual(w.inventory.current.map((i) => i.id), ['new']);
  w.list([]);
  w.inventory.trigger();
  await w.armed();
  assert.equal(w.changes(), 2, 'a removed image is a change too');
});

test('image list: a failed read keeps the last list and is logged; the next period reads again', async (t) => {
  const w = world(t);
  w.list([img('a', 1)]);
  void w.start();
  await w.armed();
  w.fail(new AgentError('ERR_UNAVAILABLE', 'runtime is down'));
  w.inventory.trigger();
  await w.armed();
  assert.deepEqual(w.inventory.current.map((i) => i.id), ['a']);
  assert.equal(w.changes(), 1);
  assert.equal(w.log.find(/Image list update failed/, 'warn').length, 1);
  w.fail(undefined);
  w.list([img('a', 1), img('b', 2)]);
  await w.clock.advanceAsync(IMAGE_LIST_PERIOD_MS);
  await w.armed();
  assert.equal(w.changes(), 2);
  w.stop.abort();
  await w.stopped();
  assert.equal(w.clock.pendingTimers, 0, 'stopped: no timer left');
});
