import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { RawPluginExecutor } from './exec.js';
import { createFailpointBin } from './testing/failpoint.js';
import type { CniError } from './errors.js';

const exec = new RawPluginExecutor();
const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_NETNS: '/x', CNI_IFNAME: 'eth0', CNI_ARGS: '', CNI_PATH: '' };
const stdin = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'fp' }));

test('plugin process failures become typed errors naming the plugin', async (t) => {
  const fp = await createFailpointBin(['fp']);
  t.after(() => fp.dispose());
  const path = await exec.findPlugin('fp', ['/nonexistent', fp.binDir]);
  const run = (timeoutMs = 10_000) => exec.execPlugin({ plugin: 'fp', path, env, stdin, timeoutMs });

  await fp.control('fp', { rules: [{ command: 'ADD', action: 'fail-json', code: 7, msg: 'bad config', details: 'field x' }] });
  await assert.rejects(run(), (e: CniError) => e.cniCode === 7 && e.msg === 'bad config' && e.details === 'field x' && e.plugin === 'fp' && e.code === 'ERR_INVALID_ARGUMENT');

  await fp.control('fp', { rules: [{ command: 'ADD', action: 'fail-json', code: 11, msg: 'busy' }] });
  await assert.rejects(run(), (e: CniError) => e.cniCode === 11 && e.retryable && e.code === 'ERR_UNAVAILABLE');

  await fp.control('fp', { rules: [{ command: 'ADD', action: 'fail-plain' }] });
  await assert.rejects(run(), (e: CniError) => /netplugin failed with exit status 2/.test(e.message) && /crashed/.test(e.details ?? ''));

  await fp.control('fp', { rules: [{ command: 'ADD', call: 2, action: 'hang' }] });
  assert.ok(JSON.parse(await run()), 'first call passes');
  const t0 = performance.now();
  await assert.rejects(run(300), (e: CniError) => e.code === 'ERR_DEADLINE_EXCEEDED' && /timed out after 300 ms/.test(e.message));
  assert.ok(performance.now() - t0 < 3000, 'killed promptly');

  const ac = new AbortController();
  await fp.control('fp', { rules: [{ command: 'ADD', action: 'hang' }] });
  const p = exec.execPlugin({ plugin: 'fp', path, env, stdin, timeoutMs: 10_000, signal: ac.signal });
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(p, { name: 'AbortError' });
});

test('missing and non-executable plugins', async (t) => {
  const fp = await createFailpointBin(['fp']);
  t.after(() => fp.dispose());
  await assert.rejects(exec.findPlugin('nope', [fp.binDir]), (e: CniError) => e.plugin === 'nope' && /failed to find plugin/.test(e.message) && e.code === 'ERR_FAILED_PRECONDITION');
  await fp.addNonExecutable('noexec');
  await assert.rejects(exec.findPlugin('noexec', [fp.binDir]), /plugin "noexec": plugin is not executable/);
  const broken = join(fp.binDir, 'broken');
  await writeFile(broken, '#!/nonexistent/interpreter\n');
  await chmod(broken, 0o755);
  await assert.rejects(exec.execPlugin({ plugin: 'broken', path: broken, env, stdin, timeoutMs: 5000 }), /interpreter is missing/);
});

test('"text file busy" is retried until the binary is closed for writing', async (t) => {
  const fp = await createFailpointBin([]);
  t.after(() => fp.dispose());
  const path = join(fp.binDir, 'busy');
  const { open } = await import('node:fs/promises');
  const fh = await open(path, 'w', 0o755);
  await fh.write('#!/bin/sh\necho \'{"cniVersion":"1.0.0"}\'\n');
  setTimeout(() => void fh.close(), 250);
  const retrying = new RawPluginExecutor({ textBusyDelayMs: 100, textBusyRetries: 10 });
  assert.equal(JSON.parse(await retrying.execPlugin({ plugin: 'busy', path, env, stdin, timeoutMs: 5000 })).cniVersion, '1.0.0');
});
