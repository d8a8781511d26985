import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@nodelet/base';
import { hostMounter, parseMountPoints, unmountAllUnder, type Mounter } from './mount.js';
import { expandSubPathExpr, prepareSubPath, subPathTarget } from './subpath.js';

/** A mounter that records and refuses: the refusal tests must never reach a mount. */
function recordingMounter(): Mounter & { binds: string[] } {
  const binds: string[] = [];
  return {
    binds,
    mountTmpfs: async () => assert.fail('no tmpfs here'),
    bindMount: async (source) => {
      binds.push(await readlink(source.replace(`/proc/${process.pid}/`, '/proc/self/')));
      throw new Error('fake mounter does not mount');
    },
    unmount: async () => undefined,
    mountPointsUnder: async () => [],
    isTmpfsMountPoint: async () => false,
  };
}

async function world(t: { after(fn: () => unknown): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-subpath-'));
  const vol = join(dir, 'pods/u1/volumes/kubernetes.io~empty-dir/data');
  await mkdir(vol, { recursive: true });
  await writeFile(join(dir, 'secret-on-host'), 'host file');
  t.after(async () => {
    await unmountAllUnder(hostMounter, dir, AbortSignal.timeout(10_000)).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  const req = (subPath: string, index = 0) => ({ volumeRoot: vol, subPath, target: subPathTarget(join(dir, 'pods/u1'), 'data', 'app', index), volume: 'data', container: 'app' });
  return { dir, vol, req };
}

const escapeError = (subPath: string) => (e: unknown) =>
  hasCode(e, 'ERR_FAILED_PRECONDITION') && (e as Error).message === `failed to prepare subPath for volumeMount "data" of container "app": subPath "${subPath}" escapes the volume "data"`;

test('a symlink planted in the volume that leaves it is refused before any mount (CVE-2017-1002101)', async (t) => {
  const w = await world(t);
  const m = recordingMounter();
  await symlink('/', join(w.vol, 'escape'));
  await symlink('..', join(w.vol, 'up'));
  await mkdir(join(w.vol, 'a'));
  await symlink('../../../../../..', join(w.vol, 'a', 'deep'));
  await symlink(w.dir, join(w.vol, 'abs'));
  for (const sub of ['escape', 'escape/etc', 'up', 'up/other', 'a/deep', 'abs/secret-on-host', 'escape/newdir/x']) {
    await assert.rejects(prepareSubPath(w.req(sub), m, AbortSignal.timeout(5000)), escapeError(sub), sub);
  }
  assert.deepEqual(m.binds, [], 'nothing was mounted');
  await assert.rejects(stat(join('/', 'newdir')), /ENOENT/, 'nothing was created through the link');
});

test('absolute and .. subPaths are refused with the upstream wording', async (t) => {
  const w = await world(t);
  const m = recordingMounter();
  await assert.rejects(prepareSubPath(w.req('/etc'), m, AbortSignal.timeout(5000)), /subPath "\/etc" must be a relative path/);
  await assert.rejects(prepareSubPath(w.req('a/../..'), m, AbortSignal.timeout(5000)), /subPath "a\/\.\.\/\.\." must not contain '\.\.'/);
  assert.deepEqual(m.binds, []);
});

test('missing directories are created with the volume root mode; links inside the volume resolve', async (t) => {
  const w = await world(t);
  const m = recordingMounter();
  const old = process.umask(0o077);
  try {
    await import('node:fs/promises').then((fs) => fs.chmod(w.vol, 0o777));
    await assert.rejects(prepareSubPath(w.req('x/y/z'), m, AbortSignal.timeout(5000)), /fake mounter/);
  } finally {
    process.umask(old);
  }
  assert.equal((await stat(join(w.vol, 'x/y/z'))).mode & 0o777, 0o777);
  assert.deepEqual(m.binds, [join(w.vol, 'x/y/z')], 'the descriptor handed to mount is the verified directory');
  await symlink('x/y', join(w.vol, 'inside'));
  await assert.rejects(prepareSubPath(w.req('inside'), m, AbortSignal.timeout(5000)), /fake mounter/);
  assert.equal(m.binds[1], join(w.vol, 'x/y'));
});

test('with root: the verified path is bind-mounted, reused when unchanged, replaced when it moved', { skip: process.getuid?.() !== 0 && 'needs root (mount)' }, async (t) => {
  const w = await world(t);
  const signal = AbortSignal.timeout(10_000);
  await mkdir(join(w.vol, 'one'));
  await writeFile(join(w.vol, 'one', 'f'), 'one');
  await mkdir(join(w.vol, 'two'));
  await writeFile(join(w.vol, 'two', 'f'), 'two');
  await symlink('one', join(w.vol, 'cur'));
  const target = await prepareSubPath(w.req('cur'), hostMounter, signal);
  assert.equal(await readFile(join(target, 'f'), 'utf8'), 'one');
  assert.equal(await prepareSubPath(w.req('cur'), hostMounter, signal), target);
  assert.equal((await hostMounter.mountPointsUnder(target)).length, 1, 'reused, not stacked');
  await rm(join(w.vol, 'cur'));
  await symlink('two', join(w.vol, 'cur'));
  await prepareSubPath(w.req('cur'), hostMounter, signal);
  assert.equal(await readFile(join(target, 'f'), 'utf8'), 'two');
  assert.equal((await hostMounter.mountPointsUnder(target)).length, 1);
  const file = await prepareSubPath(w.req('two/f', 1), hostMounter, signal);
  assert.equal(await readFile(file, 'utf8'), 'two');
  assert.equal(await unmountAllUnder(hostMounter, w.dir, signal), 2);
});

test('subPathExpr expands $(VAR) from the container environment; unset or empty variables are errors', () => {
  const env = [{ key: 'POD', value: 'web-0' }, { key: 'EMPTY', value: '' }];
  assert.equal(expandSubPathExpr('logs/$(POD)/$$(POD)', env), 'logs/web-0/$(POD)');
  assert.throws(() => expandSubPathExpr('$(NOPE)/$(EMPTY)', env), /subPathExpr "\$\(NOPE\)\/\$\(EMPTY\)": missing value for EMPTY, NOPE/);
});

test('mountinfo parsing: escapes decoded, only at or below the directory, deepest first', () => {
  const info = [
    '36 35 98:0 / /var/lib/nodelet rw - ext4 /dev/x rw',
    '37 36 0:5 / /var/lib/nodelet/pods/u/volumes/kubernetes.io~secret/a\\040b rw - tmpfs tmpfs rw',
    '38 36 98:0 /x /var/lib/nodelet/pods/u/volume-subpaths/v/c/0 rw - ext4 /dev/x rw',
    '39 35 98:0 / /var/lib/nodelet-other rw - ext4 /dev/x rw',
  ].join('\n');
  assert.deepEqual(parseMountPoints(info, '/var/lib/nodelet/pods/u'), [
    '/var/lib/nodelet/pods/u/volumes/kubernetes.io~secret/a b',
    '/var/lib/nodelet/pods/u/volume-subpaths/v/c/0',
  ]);
  assert.deepEqual(parseMountPoints(info, '/var/lib/nodelet'), ['/var/lib/nodelet/pods/u/volumes/kubernetes.io~secret/a b', '/var/lib/nodelet/pods/u/volume-subpaths/v/c/0', '/var/lib/nodelet']);
});
