// `make up` / `make down` put this checkout's bin/nodelet on PATH through scripts/nodelet-on-path.sh.
// Run against a link path in a temp dir (NODELET_LINK): a free path gets our link, ours is taken
// off again, anything else is left alone, and a symlink whose target is gone (a checkout removed
// while its lab was up) is replaced rather than blocking every later `make up`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'nodelet-on-path.sh');
const OURS = join(dirname(SCRIPT), '..', 'bin', 'nodelet');

function run(link: string, verb: 'link' | 'unlink'): string {
  return execFileSync('bash', [SCRIPT, verb], { encoding: 'utf8', env: { ...process.env, NODELET_LINK: link } });
}

test('link and unlink: a free path gets our link and loses it again; a file of someone else stays', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-on-path-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const link = join(dir, 'bin', 'nodelet');
  assert.match(run(link, 'link'), /nodelet on PATH: .* → /);
  assert.equal(readlinkSync(link), OURS);
  assert.match(run(link, 'link'), /\(already\)/);
  assert.match(run(link, 'unlink'), /removed /);
  assert.equal(existsSync(link), false);

  writeFileSync(link, '#!/bin/sh\n# a wrapper nodelet install wrote\n');
  assert.match(run(link, 'link'), /left .* alone/);
  assert.equal(run(link, 'unlink'), '');
  assert.match(readFileSync(link, 'utf8'), /a wrapper/);
});

test('a symlink to a checkout that is gone is replaced by ours; one to a live file of another checkout stays', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-on-path-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const link = join(dir, 'nodelet');
  symlinkSync(join(dir, 'removed-checkout', 'bin', 'nodelet'), link);
  assert.match(run(link, 'link'), /replaced a stale link to .*removed-checkout/);
  assert.equal(readlinkSync(link), OURS);

  rmSync(link);
  const other = join(dir, 'other-checkout-nodelet');
  writeFileSync(other, '#!/bin/sh\n');
  symlinkSync(other, link);
  assert.match(run(link, 'link'), /left .* alone \(not ours: .*other-checkout-nodelet\)/);
  assert.equal(readlinkSync(link), other);
});
