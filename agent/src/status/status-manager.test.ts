import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbortError, noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { StatusManager } from './status-manager.js';

test('flushed() waits for the writes and leaves no listener on a long-lived signal (it left one per wait)', async (t) => {
  const server = await InMemoryApiServer.start();
  const clock = new FakeClock();
  const stop = new AbortController();
  const status = new StatusManager({ api: server.client(), clock, log: noopLogger });
  const running = status.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running;
    await server.close();
  });
  const pod = server.seed(PODS, { metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] } }) as Pod;
  const life = new AbortController();
  for (let i = 0; i < 30; i++) {
    status.setStatus(pod, { phase: 'Running', message: `round ${i}` });
    await status.flushed(life.signal);
    assert.equal((server.store.get(PODS, 'default', 'web') as Pod).status?.message, `round ${i}`);
  }
  assert.equal(getEventListeners(life.signal, 'abort').length, 0);

  // An abort ends a wait that cannot finish (the API refuses the write), with an AbortError.
  server.failNext({ method: 'PATCH' }, { code: 500 }, 100);
  status.setStatus(pod, { phase: 'Running', message: 'never written' });
  const waiting = status.flushed(life.signal);
  life.abort();
  await assert.rejects(waiting, (err: unknown) => isAbortError(err));
});
