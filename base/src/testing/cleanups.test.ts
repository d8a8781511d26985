import assert from 'node:assert/strict';
import test from 'node:test';
import { cleanups } from './cleanups.js';

/** A host that records the registered hooks so the test can run them itself. */
function fakeHost(): { after(fn: () => Promise<void>): void; hooks: (() => Promise<void>)[] } {
  const hooks: (() => Promise<void>)[] = [];
  return { hooks, after: (fn) => void hooks.push(fn) };
}

test('cleanups registers one hook and runs callbacks last-in first-out, each awaited', async () => {
  const host = fakeHost();
  const cleanup = cleanups(host);
  assert.equal(host.hooks.length, 0);
  const order: string[] = [];
  cleanup(() => order.push('rm dir'));
  cleanup(async () => {
    await new Promise((r) => setTimeout(r, 10));
    order.push('close server');
  });
  cleanup(() => order.push('close client'));
  assert.equal(host.hooks.length, 1);
  await host.hooks[0]!();
  assert.deepEqual(order, ['close client', 'close server', 'rm dir']);
});

test('cleanups runs every callback when one throws and rethrows that error', async () => {
  const host = fakeHost();
  const cleanup = cleanups(host);
  const ran: string[] = [];
  cleanup(() => ran.push('first'));
  cleanup(() => {
    throw new Error('boom');
  });
  cleanup(() => ran.push('last'));
  await assert.rejects(host.hooks[0]!(), { message: 'boom' });
  assert.deepEqual(ran, ['last', 'first']);
});

test('cleanups surfaces several failures as an AggregateError', async () => {
  const host = fakeHost();
  const cleanup = cleanups(host);
  cleanup(() => Promise.reject(new Error('a')));
  cleanup(() => {
    throw new Error('b');
  });
  await assert.rejects(host.hooks[0]!(), (err: unknown) => {
    assert.ok(err instanceof AggregateError);
    assert.deepEqual(
      err.errors.map((e: Error) => e.message),
      ['b', 'a'],
    );
    return true;
  });
});

test('cleanups works through a real node:test context: the dir outlives the server', async (t) => {
  const order: string[] = [];
  await t.test('inner', (st) => {
    const cleanup = cleanups(st);
    cleanup(() => order.push('rm dir'));
    cleanup(() => order.push('server close'));
  });
  assert.deepEqual(order, ['server close', 'rm dir']);
});

test('cleanups called again with the same context adds to the same stack (fixture helper and test body)', async () => {
  const host = fakeHost();
  const order: string[] = [];
  const fixture = (): void => {
    cleanups(host)(() => order.push('fixture dir'));
    cleanups(host)(() => order.push('fixture server'));
  };
  fixture();
  cleanups(host)(() => order.push('test client'));
  assert.equal(host.hooks.length, 1);
  await host.hooks[0]!();
  assert.deepEqual(order, ['test client', 'fixture server', 'fixture dir']);
});
