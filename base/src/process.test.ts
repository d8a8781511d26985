import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { processExists } from './process.js';

test('processExists: this process and PID 1 (EPERM or not) exist; a reaped child does not', async () => {
  assert.equal(processExists(process.pid), true);
  assert.equal(processExists(1), true);
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  assert.equal(processExists(child.pid!), false);
});
