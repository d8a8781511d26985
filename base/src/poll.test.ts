import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAssertionError, isCheckDefect, pollUntil } from './poll.js';

test('returns the first truthy value; undefined, null, false, 0 and "" are "not yet"; a throw is "not yet"', async () => {
  const answers: unknown[] = [undefined, null, false, 0, '', new Error('boom'), 'done'];
  let i = 0;
  const v = await pollUntil('the answer', () => {
    const a = answers[i++];
    if (a instanceof Error) throw a;
    return a as string | undefined;
  }, { timeoutMs: 5_000, intervalMs: 0 });
  assert.equal(v, 'done');
  assert.equal(i, answers.length);
});

test('the timeout names what it waited for, how often it looked and why the last look failed', async () => {
  await assert.rejects(
    pollUntil('the node to be Ready', () => {
      throw new Error('connection refused');
    }, { timeoutMs: 30, intervalMs: 5, detail: async () => 'agent log: …' }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ERR_DEADLINE_EXCEEDED');
      assert.match(err.message, /^timed out after 30 ms waiting for the node to be Ready \(\d+ checks; the last failed: connection refused\)\nagent log: …$/);
      return true;
    },
  );
  await assert.rejects(pollUntil('x', () => false, { timeoutMs: 0 }), (err: Error) => /^timed out after 0 ms waiting for x \(\d+ checks?\)$/.test(err.message));
});

test('an aborted signal ends the wait with its reason', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('shutting down')), 20);
  await assert.rejects(pollUntil('never', () => false, { timeoutMs: 10_000, intervalMs: 5, signal: ac.signal }), /shutting down|aborted/);
});

test('fatal: an error it names ends the wait at once with that error; other errors stay "not yet"', async () => {
  let checks = 0;
  const started = Date.now();
  await assert.rejects(
    pollUntil('the claim', () => {
      checks++;
      if (checks === 1) throw new Error('connection refused');
      assert.equal(1 + 1, 3, 'arithmetic');
      return true;
    }, { timeoutMs: 10_000, intervalMs: 0, fatal: isAssertionError }),
    (err: Error & { code?: string }) => err.code === 'ERR_ASSERTION' && /arithmetic/.test(err.message),
  );
  assert.equal(checks, 2, 'the plain error was retried, the assertion was not');
  assert.ok(Date.now() - started < 5_000, 'not at the deadline');
  assert.equal(isAssertionError(new Error('x')), false);
});

test('by default a failed assert or a bug in the check ends the wait at once; a network failure stays "not yet"', async () => {
  const defects: [string, () => never][] = [
    ['assert', () => assert.fail('the claim')],
    ['property of undefined', () => (undefined as unknown as { status: { phase: string } }).status.phase as never],
    ['not a function', () => (null as unknown as () => never)()],
    ['reference', () => { throw new ReferenceError('x is not defined'); }],
  ];
  for (const [name, check] of defects) {
    let checks = 0;
    await assert.rejects(
      pollUntil(name, () => { checks++; return check(); }, { timeoutMs: 10_000, intervalMs: 0 }),
      (err: Error) => !/timed out/.test(err.message),
    );
    assert.equal(checks, 1, `${name}: one check, not a retry until the deadline`);
  }
  // fetch's own failure: a TypeError whose cause is the socket's error.
  const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
  const answers: unknown[] = [refused, new SyntaxError('Unexpected end of JSON input'), new Error('404'), 'up'];
  let i = 0;
  assert.equal(await pollUntil('the server', () => { const a = answers[i++]; if (a instanceof Error) throw a; return a as string; }, { timeoutMs: 5_000, intervalMs: 0 }), 'up');
  assert.equal(isCheckDefect(refused), false);
  assert.equal(isCheckDefect(new TypeError('Cannot read properties of undefined')), true);
  // A caller that expects such an error while it waits says so.
  let n = 0;
  assert.equal(await pollUntil('tolerant', () => { if (n++ < 2) throw new TypeError('expected here'); return true; }, { timeoutMs: 5_000, intervalMs: 0, fatal: () => false }), true);
});
