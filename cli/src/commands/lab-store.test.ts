// One default image store: `nodelet lab up` serves the store `nodelet image import|build` write to
// by default, so an image imported on a running lab is pulled without a flag (issue 26).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { DEFAULT_IMAGE_STORE } from '@nodelet/oci';
import { buildProgram } from '../main.js';

function storeDefault(program: Command, path: string[]): unknown {
  let cmd = program;
  for (const name of path) {
    const next = cmd.commands.find((c) => c.name() === name);
    assert.ok(next, `command ${path.join(' ')}`);
    cmd = next;
  }
  return cmd.options.find((o) => o.long === '--store')?.defaultValue;
}

test('lab up serves the default store of image import and image build', () => {
  const program = buildProgram();
  assert.equal(storeDefault(program, ['image', 'import']), DEFAULT_IMAGE_STORE);
  assert.equal(storeDefault(program, ['image', 'build']), DEFAULT_IMAGE_STORE);
  assert.equal(storeDefault(program, ['lab', 'up']), DEFAULT_IMAGE_STORE);
});
