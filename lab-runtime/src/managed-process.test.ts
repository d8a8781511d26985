import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { isAlive, terminate } from './procs.js';
import { logTail, managedPid, managedProcess, startManaged, stopManaged } from './managed-process.js';
import { cleanups } from '@nodelet/base/testing';

test('start, find by pidfile only while the argv is ours, stop by PID (idempotent)', async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-managed-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const p = managedProcess(dir, 'sleeper');
  const marker = join(dir, 'marker');
  const started = await startManaged(p, process.execPath, ['-e', "console.log('started'); setTimeout(() => {}, 60_000)", marker]);
  cleanup(() => terminate(started.pid, 1_000));
  const ours = (argv: readonly string[]): boolean => argv.includes(marker);
  assert.equal(await managedPid(p, ours), started.pid);
  assert.equal(await managedPid(p, (argv) => argv.includes('someone else')), undefined, 'a PID whose argv is not ours is not ours');
  assert.equal(started.exited(), undefined);
  await pollUntil('the process to log', async () => (await logTail(p.logFile)) === 'started', { timeoutMs: 10_000 });

  assert.equal(await stopManaged(p, ours, 5_000), true);
  assert.equal(await isAlive(started.pid), false);
  assert.equal(existsSync(p.pidFile), false, 'pidfile removed');
  assert.equal(await stopManaged(p, ours, 5_000), false, 'stopping again is a no-op');
});

test('a stale pidfile (a PID that is gone) is not running; a missing binary is named with how to install it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-managed-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = managedProcess(dir, 'gone');
  await writeFile(p.pidFile, '999999999\n');
  assert.equal(await managedPid(p, () => true), undefined);
  await assert.rejects(startManaged(p, join(dir, 'no-such-binary'), [], { installHint: 'apt-get install it' }), {
    code: 'ERR_FAILED_PRECONDITION',
    message: 'gone is not installed (apt-get install it)',
  });
  assert.equal(await logTail(join(dir, 'none.log')), '(no log)');
});
