import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, stat, lstat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '@nodelet/api';
import { applyFsGroup } from './fs-group.js';

const signal = new AbortController().signal;
const root = process.getuid?.() === 0;

async function layout(policy?: 'Always' | 'OnRootMismatch') {
  const dir = await mkdtemp(join(tmpdir(), 'fsgroup-'));
  const vol = join(dir, 'pods', 'u1', 'volumes', 'kubernetes.io~empty-dir', 'data');
  await mkdir(join(vol, 'sub'), { recursive: true });
  await writeFile(join(vol, 'sub', 'f'), 'x', { mode: 0o600 });
  const outside = join(dir, 'outside');
  await writeFile(outside, 'node file', { mode: 0o600 });
  await symlink(outside, join(vol, 'link'));
  const pod: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
    spec: { securityContext: { fsGroup: 2345, ...(policy ? { fsGroupChangePolicy: policy } : {}) }, volumes: [{ name: 'data', emptyDir: {} }], containers: [{ name: 'c' }] },
  };
  return { dir, vol, outside, pod };
}

test('fsGroup: an emptyDir gets the group, group rw, setgid directories; a planted symlink\'s target is left alone', { skip: !root && 'needs root (chown)' }, async () => {
  const { dir, vol, outside, pod } = await layout();
  try {
    await applyFsGroup(pod, dir, signal);
    const d = await stat(join(vol, 'sub'));
    assert.equal(d.gid, 2345);
    assert.equal(d.mode & 0o2770, 0o2770);
    const f = await stat(join(vol, 'sub', 'f'));
    assert.equal(f.gid, 2345);
    assert.equal(f.mode & 0o777, 0o660);
    assert.equal((await lstat(join(vol, 'link'))).gid, 2345);
    const o = await stat(outside);
    assert.notEqual(o.gid, 2345);
    assert.equal(o.mode & 0o777, 0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('fsGroupChangePolicy OnRootMismatch leaves the files alone when the root matches; Always changes them again', { skip: !root && 'needs root (chown)' }, async () => {
  const { dir, vol, pod } = await layout('OnRootMismatch');
  try {
    await applyFsGroup(pod, dir, signal);
    await chmod(join(vol, 'sub', 'f'), 0o600);
    await applyFsGroup(pod, dir, signal);
    assert.equal((await stat(join(vol, 'sub', 'f'))).mode & 0o777, 0o600, 'root matched: nothing walked');
    pod.spec!.securityContext!.fsGroupChangePolicy = 'Always';
    await applyFsGroup(pod, dir, signal);
    assert.equal((await stat(join(vol, 'sub', 'f'))).mode & 0o777, 0o660);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
