import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hybridCgroupsWithV2Controllers, renderCrunWrapper } from './crun.js';

test('hybrid hosts with cgroup2 controllers are told apart from v2 and plain v1 hosts', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-cgroup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const host = (name: string, files: Record<string, string>): string => {
    const root = join(dir, name);
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(root, f, '..'), { recursive: true });
      writeFileSync(join(root, f), text);
    }
    mkdirSync(root, { recursive: true });
    return root;
  };
  assert.equal(hybridCgroupsWithV2Controllers(host('v2', { 'cgroup.controllers': 'cpu memory pids\n' })), false);
  assert.equal(hybridCgroupsWithV2Controllers(host('v1', { 'memory/tasks': '' })), false);
  assert.equal(hybridCgroupsWithV2Controllers(host('hybrid-empty', { 'unified/cgroup.controllers': '' })), false);
  assert.equal(hybridCgroupsWithV2Controllers(host('hybrid', { 'unified/cgroup.controllers': 'hugetlb\n' })), true);
});

test('the wrapper hides the unified hierarchy in a private mount namespace and passes every argument to crun', () => {
  const text = renderCrunWrapper('/usr/bin/crun');
  assert.ok(text.startsWith('#!/bin/sh\n'));
  assert.match(text, /^exec \/usr\/bin\/unshare --mount --propagation private \/bin\/sh -c 'umount -l \/sys\/fs\/cgroup\/unified && exec "\$0" "\$@"' \/usr\/bin\/crun "\$@"$/m);
});
