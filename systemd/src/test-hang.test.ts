import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { noopLogger } from '@nodelet/base';
import { armTestHang, TEST_HANG_FILE_ENV, TEST_HANG_MS_ENV } from './test-hang.js';

const LATER = String(2 ** 31 - 1); // never fires during the test; cancelled anyway

test('the hang hook needs both variables and an existing once-file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-hang-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'once');
  assert.equal(armTestHang({ [TEST_HANG_MS_ENV]: LATER }, noopLogger), undefined);
  assert.equal(armTestHang({ [TEST_HANG_FILE_ENV]: file }, noopLogger), undefined);
  assert.equal(armTestHang({ [TEST_HANG_MS_ENV]: LATER, [TEST_HANG_FILE_ENV]: file }, noopLogger), undefined, 'file missing');
  writeFileSync(file, '');
  assert.equal(armTestHang({ [TEST_HANG_MS_ENV]: '1s', [TEST_HANG_FILE_ENV]: file }, noopLogger), undefined, 'not a number of ms');
  assert.ok(existsSync(file));
});

test('an armed hook consumes its once-file, so a restarted process does not hang again', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-hang-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'once');
  writeFileSync(file, '');
  const env = { [TEST_HANG_MS_ENV]: LATER, [TEST_HANG_FILE_ENV]: file };
  const cancel = armTestHang(env, noopLogger);
  assert.ok(cancel);
  cancel();
  assert.equal(existsSync(file), false);
  assert.equal(armTestHang(env, noopLogger), undefined);
});
