// quiesce() returns only once a chain of work is over: the test's write reached the informer, the
// slow reconcile it caused ran, and that reconcile's own write came back through the informer and
// was reconciled too. A key delayed on the clock is work for later and does not hold it up.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIGMAPS, WorkQueue, type ApiClient } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { runController, SharedInformers, type Controller, type ReconcileResult } from '../runtime.js';
import { quiesce } from './quiesce.js';

/** A controller on ConfigMaps: `reconcile(name)` is the test's; every event enqueues the name. */
async function start(t: TestContext, reconcile: (name: string) => Promise<ReconcileResult | void>) {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const clock = new FakeClock();
  // The informers hear of every change 100 ms late, so the write's answer always comes before its
  // event: "the queue is empty" right after a write says nothing.
  const lagging = {
    listAll: client.listAll.bind(client),
    watch: (r: Parameters<ApiClient['watch']>[0], o: Parameters<ApiClient['watch']>[1]) => (async function* () {
      for await (const e of client.watch(r, o)) {
        await new Promise((res) => setTimeout(res, 100));
        yield e;
      }
    })(),
  } as unknown as ApiClient;
  const informers = new SharedInformers({ client: lagging, clock, logger: noopLogger });
  const queue = new WorkQueue({ clock });
  const enqueue = (o: { metadata: { name?: string } }): void => queue.add(o.metadata.name ?? '');
  informers.for(CONFIGMAPS, { namespace: 'default' }).on({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue });
  const controller: Controller = { name: 'test', queue, workers: 1, reconcile: (key) => reconcile(key) };
  const stop = new AbortController();
  informers.start();
  await informers.waitForSync(stop.signal);
  const running = runController(controller, stop.signal, noopLogger);
  t.after(async () => {
    stop.abort();
    await running;
    await informers.close();
  });
  return { client, cms: client.resource(CONFIGMAPS, 'default'), m: { controllers: [controller], informers }, clock, queue };
}

test('waits for a slow reconcile and for the reconcile its own write causes', async (t) => {
  const seen: string[] = [];
  const w = await start(t, async (name) => {
    seen.push(name);
    await new Promise((r) => setTimeout(r, 150)); // a slow reconcile: a 100 ms sleep in the test would not see its end
    if (name === 'a') await w.cms.create({ metadata: { name: 'b', namespace: 'default' } }).catch(() => undefined);
  });
  await w.cms.create({ metadata: { name: 'a', namespace: 'default' } });
  await quiesce(w.m, w.client);
  assert.deepEqual(seen, ['a', 'b'], 'b, written by the reconcile of a, was reconciled before quiesce returned');
});

test('a key delayed on the clock is work for later: quiesce returns, and the key runs once the clock gets there', async (t) => {
  const seen: string[] = [];
  const w = await start(t, async (name) => {
    seen.push(name);
    return seen.length === 1 ? { requeueAfterMs: 60_000 } : undefined;
  });
  await w.cms.create({ metadata: { name: 'later', namespace: 'default' } });
  await quiesce(w.m, w.client);
  assert.deepEqual(seen, ['later']);
  w.clock.advance(60_000);
  await quiesce(w.m, w.client);
  assert.deepEqual(seen, ['later', 'later']);
});
