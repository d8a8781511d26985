// `nodelet kubeconfig create` does not replace a kubeconfig without a word (issue 32): an existing
// output file is refused before anything is asked of the cluster, unless --force.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { hasCode } from '@nodelet/base';
import { createUserKubeconfig } from './kubeconfig-create.js';

test('kubeconfig create refuses to overwrite an existing file without force', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-kubeconfig-create-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'alice.kubeconfig');
  writeFileSync(out, 'mine\n');
  const opts = { adminKubeconfig: join(dir, 'no-admin.kubeconfig'), user: 'alice', groups: [], days: 1, out };
  await assert.rejects(createUserKubeconfig(opts), (e: Error) => hasCode(e, 'ERR_ALREADY_EXISTS') && /--force/.test(e.message));
  assert.equal(readFileSync(out, 'utf8'), 'mine\n');
  // With force it goes on to the cluster (here: no admin kubeconfig, so a different error).
  await assert.rejects(createUserKubeconfig({ ...opts, force: true }), (e: Error) => !hasCode(e, 'ERR_ALREADY_EXISTS'));
});
