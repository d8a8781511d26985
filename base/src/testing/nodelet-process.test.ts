import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, startNodeletProcess } from './nodelet-process.js';
import { firstRecord } from './test-process.js';

// `-e` in nodeArgs makes node run that code instead of bin/nodelet and hand the rest to process.argv,
// so the child reports the command line the kit built for it.
const REPORT = `console.log(JSON.stringify({ msg: 'Argv', argv: process.argv.slice(1), cwd: process.cwd(), conditions: process.execArgv.includes('--conditions=source') })); setInterval(() => {}, 1000);`;

test('startNodeletProcess: node flags before the script, the flags after it exactly as given (no --log-level added), cwd the root', async (t) => {
  const p = await startNodeletProcess({ name: 'argv', dist: true, nodeArgs: ['-e', REPORT], args: ['hollow', '--log-level', 'warn'], ready: (p) => firstRecord(p, 'Argv'), t });
  assert.deepEqual(p.ready.argv, [join(REPO_ROOT, 'bin', 'nodelet'), 'hollow', '--log-level', 'warn']);
  assert.equal(p.ready.cwd, REPO_ROOT.replace(/\/$/, ''));
  assert.equal(p.ready.conditions, false);
});

test('startNodeletProcess: the sources run under tsx with the source condition, as bin/nodelet-dev runs them', async (t) => {
  const p = await startNodeletProcess({ name: 'argv-src', nodeArgs: ['-e', REPORT], args: ['agent'], ready: (p) => firstRecord(p, 'Argv'), t });
  assert.equal(p.ready.conditions, true);
  assert.deepEqual(p.ready.argv, [join(REPO_ROOT, 'bin', 'nodelet'), 'agent']);
});
