import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@nodelet/base';
import { writeAtomically, type FileProjection } from './atomic-writer.js';

const enc = (s: string): Uint8Array => Buffer.from(s);
const payload = (o: Record<string, [string, number]>): Map<string, FileProjection> => new Map(Object.entries(o).map(([k, [d, mode]]) => [k, { data: enc(d), mode }]));
const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o7777;

async function tempDir(t: { after(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-atomic-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `fn` with the process umask set to `mask`, as an agent started under that umask would. */
async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const old = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(old);
  }
}

for (const mask of [0o077, 0o000]) {
  test(`files get exactly their payload mode whatever the umask (${mask.toString(8).padStart(3, '0')})`, async (t) => {
    const dir = await tempDir(t);
    await withUmask(mask, () => writeAtomically(dir, payload({ a: ['A', 0o644], 'sub/b': ['B', 0o400], x: ['X', 0o755] })));
    assert.equal(await mode(join(dir, 'a')), 0o644);
    assert.equal(await mode(join(dir, 'sub/b')), 0o400);
    assert.equal(await mode(join(dir, 'x')), 0o755);
    assert.equal(await mode(join(dir, '..data')), 0o755, 'version directory');
    assert.equal(await mode(join(dir, 'sub')), 0o755, 'directory inside the version');
  });
}

test('layout: ..data links the version, visible names link into ..data', async (t) => {
  const dir = await tempDir(t);
  const changed = await writeAtomically(dir, payload({ a: ['A', 0o644], 'sub/b': ['B', 0o644] }), { now: () => new Date(Date.UTC(2025, 0, 2, 15, 4, 5)) });
  assert.equal(changed, true);
  const version = await readlink(join(dir, '..data'));
  assert.match(version, /^\.\.2025_01_02_15_04_05\..+$/);
  assert.equal(await readlink(join(dir, 'a')), '..data/a');
  assert.equal(await readlink(join(dir, 'sub')), '..data/sub');
  assert.equal(await readFile(join(dir, 'sub/b'), 'utf8'), 'B');
  assert.deepEqual((await readdir(dir)).sort(), ['..data', version, 'a', 'sub'].sort());
});

test('an unchanged payload writes nothing; a change swaps versions and drops removed keys', async (t) => {
  const dir = await tempDir(t);
  await writeAtomically(dir, payload({ a: ['A', 0o644], 'sub/b': ['B', 0o644] }));
  const v1 = await readlink(join(dir, '..data'));
  assert.equal(await writeAtomically(dir, payload({ a: ['A', 0o644], 'sub/b': ['B', 0o644] })), false);
  assert.equal(await readlink(join(dir, '..data')), v1);
  // A mode change alone is a change.
  assert.equal(await writeAtomically(dir, payload({ a: ['A', 0o600], 'sub/b': ['B', 0o644] })), true);
  assert.equal(await mode(join(dir, 'a')), 0o600);
  assert.equal(await writeAtomically(dir, payload({ a: ['A2', 0o644] })), true);
  const v3 = await readlink(join(dir, '..data'));
  assert.notEqual(v3, v1);
  assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'A2');
  await assert.rejects(lstat(join(dir, 'sub')), /ENOENT/, 'the removed key is gone');
  assert.deepEqual((await readdir(dir)).sort(), ['..data', v3, 'a'].sort(), 'old versions removed');
  assert.equal(await writeAtomically(dir, new Map()), true);
  assert.deepEqual((await readdir(dir)).filter((n) => !n.startsWith('..')), [], 'an empty payload leaves no visible names');
});

test('paths that would leave the directory or collide with ours are refused before anything is written', async (t) => {
  const dir = await tempDir(t);
  for (const bad of ['../x', '/etc/passwd', '..data', '..x/y', 'a/../../b', '']) {
    await assert.rejects(writeAtomically(dir, payload({ [bad]: ['x', 0o644] })), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'), bad);
  }
  await assert.rejects(writeAtomically(dir, payload({ a: ['x', 0o644], 'a/b': ['y', 0o644] })), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
  assert.deepEqual(await readdir(dir), []);
});

test('plain files left by an older agent are replaced by links; a payload mode above 0777 is masked', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'a'), 'old');
  await mkdir(join(dir, 'stale'));
  await writeFile(join(dir, 'stale', 'f'), 'old');
  await writeAtomically(dir, payload({ a: ['new', 0o4755] }));
  assert.equal(await readlink(join(dir, 'a')), '..data/a');
  assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'new');
  assert.equal(await mode(join(dir, 'a')), 0o755);
  await assert.rejects(lstat(join(dir, 'stale')), /ENOENT/);
});

test('fsGroup: group ownership, g+r on files, g+rx and setgid on directories', { skip: process.getuid?.() !== 0 && 'needs root (chown)' }, async (t) => {
  const dir = await tempDir(t);
  await withUmask(0o077, () => writeAtomically(dir, payload({ a: ['A', 0o400], 'd/b': ['B', 0o600] }), { fsGroup: 4321 }));
  const a = await stat(join(dir, 'a'));
  assert.equal(a.gid, 4321);
  assert.equal(a.mode & 0o7777, 0o440);
  assert.equal((await stat(join(dir, 'd/b'))).mode & 0o7777, 0o640);
  const d = await stat(join(dir, 'd'));
  assert.equal(d.mode & 0o7777, 0o2755);
  assert.equal(d.gid, 4321);
  assert.equal((await lstat(join(dir, 'a'))).gid, 4321, 'the link too');
  assert.equal(await writeAtomically(dir, payload({ a: ['A', 0o400], 'd/b': ['B', 0o600] }), { fsGroup: 4321 }), false);
  assert.equal(await writeAtomically(dir, payload({ a: ['A', 0o400], 'd/b': ['B', 0o600] }), { fsGroup: 1234 }), true, 'a new fsGroup rewrites');
});
