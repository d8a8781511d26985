import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { pollUntil } from '../poll.js';
import { firstRecord, startTestProcess } from './test-process.js';

const node = (script: string): { command: string; args: string[] } => ({ command: process.execPath, args: ['-e', script] });

test('startTestProcess: ready on an output line, records() reads it, stop() ends the process and removes its temp log', async (t) => {
  const p = await startTestProcess({
    name: 'echo',
    ...node(`console.log(JSON.stringify({ msg: 'Up', n: 1 })); setInterval(() => {}, 1000);`),
    ready: (p) => firstRecord(p, 'Up'),
    t,
  });
  assert.equal(p.ready.n, 1);
  assert.equal(p.records('Up').length, 1);
  assert.equal(p.exited(), undefined);
  await p.stop();
  assert.equal(p.exited()?.signal, 'SIGTERM');
  assert.equal(existsSync(dirname(p.logFile)), false);
  await p.stop(); // idempotent
});

test('startTestProcess: an exit before ready fails at once with the output tail', async () => {
  const started = Date.now();
  await assert.rejects(
    startTestProcess({ name: 'quitter', ...node(`console.error('bad flag --x'); process.exit(3);`), ready: () => false, readyTimeoutMs: 30_000 }),
    (err: Error) => /quitter exited \(3\) before it was ready/.test(err.message) && /bad flag --x/.test(err.message),
  );
  assert.ok(Date.now() - started < 20_000, 'did not wait for the deadline');
});

test('startTestProcess: stop() SIGKILLs a process that ignores SIGTERM after graceMs', async () => {
  const p = await startTestProcess({
    name: 'stubborn',
    ...node(`process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);`),
    ready: (p) => p.output().includes('ready'),
    graceMs: 200,
  });
  await p.stop();
  assert.equal(p.exited()?.signal, 'SIGKILL');
});

test('startTestProcess: ipc hands the child messages to the callback and send() reaches it; startedAt is before ready', async (t) => {
  const got: unknown[] = [];
  const before = performance.now();
  const p = await startTestProcess({
    name: 'echo-ipc',
    ...node(`process.on('message', (m) => process.send({ echo: m })); process.send({ up: true });`),
    ipc: (m) => got.push(m),
    ready: () => got.length > 0,
    t,
  });
  assert.ok(p.startedAt >= before && p.startedAt <= performance.now());
  assert.deepEqual(got, [{ up: true }]);
  p.send({ n: 7 });
  await pollUntil('echo', () => got.length === 2, { timeoutMs: 10_000, intervalMs: 10 });
  assert.deepEqual(got[1], { echo: { n: 7 } });
  await p.stop();
  assert.equal(p.exited()?.signal, 'SIGTERM');
});

test('startTestProcess: send() without the ipc option is an error, not a silent drop', async (t) => {
  const p = await startTestProcess({ name: 'no-ipc', ...node(`console.log('up'); setInterval(() => {}, 1000);`), ready: (p) => p.output().includes('up'), t });
  assert.throws(() => p.send({}), /without an IPC channel/);
});
