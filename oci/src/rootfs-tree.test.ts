import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { comparePaths, RootfsTree } from './rootfs-tree.js';

test('entries: depth-first, children by byte order, parents 0755, later nodes replace earlier ones', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-rootfs-tree-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'src', 'a', 'b'), { recursive: true });
  await mkdir(join(dir, 'src', 'a-c'));
  await writeFile(join(dir, 'src', 'a', 'b', 'f'), 'f');
  await symlink('a/b/f', join(dir, 'src', 'Z'));
  await chmod(join(dir, 'src', 'a-c'), 0o1777);
  await writeFile(join(dir, 'file'), 'file');

  const tree = new RootfsTree();
  await tree.addTree(join(dir, 'src'), '/srv');
  await tree.addFile(join(dir, 'file'), '/srv/a/b', 0o600); // a file replacing a directory drops its subtree
  await tree.addFile(join(dir, 'file'), '/deep/new/file');
  const got = tree.entries().map((e) => [e.path, e.type, e.type === 'symlink' ? e.target : e.mode.toString(8)]);
  assert.deepEqual(got, [
    ['deep', 'dir', '755'],
    ['deep/new', 'dir', '755'],
    ['deep/new/file', 'file', '644'],
    ['srv', 'dir', '755'],
    ['srv/Z', 'symlink', 'a/b/f'],
    ['srv/a', 'dir', '755'],
    ['srv/a/b', 'file', '600'],
    ['srv/a-c', 'dir', '1777'],
  ]);
  assert.ok(comparePaths('a', 'a/b') < 0 && comparePaths('a/b', 'a-c') < 0 && comparePaths('Z', 'a') < 0);

  await assert.rejects(tree.addFile(join(dir, 'file'), '/srv/a/b/x'), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /"\/srv\/a\/b" is not a directory/.test(err.message));
  await assert.rejects(tree.addTree(join(dir, 'file'), '/x'), /is not a directory/);
});

test('setOwner: a path gets uid, gid and mode in its entry (links keep 0777); missing paths are refused unless optional', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-rootfs-tree-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'run', 'postgresql'), { recursive: true });
  await writeFile(join(dir, 'run', 'x'), 'x');
  const tree = new RootfsTree();
  await tree.addTree(dir, '/');
  tree.addSymlink('/var/run', '/run');
  tree.setOwner({ path: '/run/postgresql', uid: 102, gid: 102, mode: 0o2775 });
  tree.setOwner({ path: '/run/x', uid: 0, gid: 42 });
  tree.setOwner({ path: '/var/run', uid: 5, gid: 5, mode: 0o700 });
  tree.setOwner({ path: '/var/run/postgresql', uid: 1, gid: 1, optional: true });
  assert.throws(() => tree.setOwner({ path: '/var/run/postgresql', uid: 1, gid: 1 }), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /"\/var\/run\/postgresql": it is not in the image/.test(err.message));
  const got = tree.entries().map((e) => ({ path: e.path, uid: e.uid, gid: e.gid, ...(e.type === 'symlink' ? {} : { mode: e.mode.toString(8) }) }));
  assert.deepEqual(got.filter((e) => e.path.startsWith('run') || e.path.startsWith('var')), [
    { path: 'run', uid: undefined, gid: undefined, mode: (0o7777 & statSync(join(dir, 'run')).mode).toString(8) },
    { path: 'run/postgresql', uid: 102, gid: 102, mode: '2775' },
    { path: 'run/x', uid: 0, gid: 42, mode: (0o7777 & statSync(join(dir, 'run', 'x')).mode).toString(8) },
    { path: 'var', uid: undefined, gid: undefined, mode: '755' },
    { path: 'var/run', uid: 5, gid: 5 },
  ]);
});
