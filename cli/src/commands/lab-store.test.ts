// One default image store: `nodelet lab up` serves the store `nodelet image import|build` write to
// by default, so an image imported on a running lab is pulled without a flag (issue 26).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { DEFAULT_IMAGE_STORE } from '@nodelet/oci';
import { DEFAULT_LAB_RUNTIME_DIR, DEFAULT_LAB_STATE_DIR, DEFAULT_REGISTRY, labLayout } from '@nodelet/lab-runtime';
import { join } from 'node:path';
import { buildProgram } from '../main.js';
import { labPaths } from './lab/cluster.js';
import { DEFAULT_ENDPOINTS } from './cri/context.js';
import { DEFAULT_LAB_DIR } from './doctor/node-config.js';

function storeDefault(program: Command, path: string[]): unknown {
  return optionDefault(program, path, '--store');
}

function optionDefault(program: Command, path: string[], long: string): unknown {
  let cmd = program;
  for (const name of path) {
    const next = cmd.commands.find((c) => c.name() === name);
    assert.ok(next, `command ${path.join(' ')}`);
    cmd = next;
  }
  return cmd.options.find((o) => o.long === long)?.defaultValue;
}

test('lab up serves the default store of image import and image build', () => {
  const program = buildProgram();
  assert.equal(storeDefault(program, ['image', 'import']), DEFAULT_IMAGE_STORE);
  assert.equal(storeDefault(program, ['image', 'build']), DEFAULT_IMAGE_STORE);
  assert.equal(storeDefault(program, ['lab', 'up']), DEFAULT_IMAGE_STORE);
});

// One place knows the lab's paths (issue 32): `nodelet cri` without -r, `nodelet runtime`, doctor,
// audit and `lab up` name the containerd, kubeconfig and registry `make up` runs.
test('every command defaults to the make-up lab of lab-layout.ts', () => {
  const program = buildProgram();
  const lab = labPaths(DEFAULT_LAB_STATE_DIR);
  assert.equal(DEFAULT_LAB_RUNTIME_DIR, lab.containerd);
  assert.ok(DEFAULT_ENDPOINTS.includes(labLayout().runtimeEndpoint), `cri's default sockets ${DEFAULT_ENDPOINTS.join(', ')}`);
  assert.equal(labLayout().runtimeEndpoint, `unix://${join(lab.containerd, 'containerd.sock')}`);
  assert.equal(optionDefault(program, ['runtime', 'status'], '--dir'), lab.containerd);
  assert.equal(optionDefault(program, ['lab', 'up'], '--state-dir'), DEFAULT_LAB_STATE_DIR);
  assert.equal(optionDefault(program, ['lab', 'add-node'], '--admin-kubeconfig'), lab.adminKubeconfig);
  assert.equal(optionDefault(program, ['audit'], '--log'), lab.auditLog);
  assert.equal(optionDefault(program, ['image', 'serve'], '--address'), DEFAULT_REGISTRY);
  assert.equal(DEFAULT_LAB_DIR, DEFAULT_LAB_STATE_DIR);
});
