import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readdirIfExists } from './fs.js';

test('readdirIfExists: the names, none for a missing directory, and other failures thrown', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-readdir-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'a'), '');
  assert.deepEqual(await readdirIfExists(dir), ['a']);
  assert.deepEqual(await readdirIfExists(join(dir, 'missing')), []);
  await assert.rejects(readdirIfExists(join(dir, 'a')), (e: NodeJS.ErrnoException) => e.code === 'ENOTDIR');
});
