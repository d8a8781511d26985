import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { ContainerLogManager, planRotation, rotatedName } from './container-log-manager.js';

test('rotated names use Go\'s 20060102-150405 layout', () => {
  assert.equal(rotatedName('/l/0.log', Date.UTC(2026, 0, 2, 3, 4, 5)), '/l/0.log.20260102-030405');
});

test('plan: leftovers go, rotated files beyond maxFiles-2 go oldest first, all but the newest are compressed', () => {
  const names = ['0.log', '1.log', '0.log.20260101-000001.gz', '0.log.20260101-000002', '0.log.20260101-000003', '0.log.20260101-000004', '0.log.x.gz.tmp', '1.log.20260101-000000'];
  assert.deepEqual(planRotation('0.log', names, 5), {
    remove: ['0.log.x.gz.tmp', '0.log.20260101-000001.gz'],
    compress: ['0.log.20260101-000002', '0.log.20260101-000003'],
  });
  assert.deepEqual(planRotation('0.log', names, 3), {
    remove: ['0.log.x.gz.tmp', '0.log.20260101-000001.gz', '0.log.20260101-000002', '0.log.20260101-000003'],
    compress: [],
  });
  // An interrupted compression left both: the original goes, the .gz stays.
  assert.deepEqual(planRotation('0.log', ['0.log', '0.log.20260101-000001', '0.log.20260101-000001.gz', '0.log.20260101-000002'], 5), {
    remove: ['0.log.20260101-000001'],
    compress: [],
  });
  assert.deepEqual(planRotation('0.log', ['0.log'], 2), { remove: [], compress: [] });
});

async function world(t: { after(fn: () => unknown): void }, reopen: (path: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-logrot-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, '0.log');
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const reopened: string[] = [];
  const m = new ContainerLogManager({
    runtime: { reopenContainerLog: async (req) => { reopened.push(String(req.containerId)); await reopen(path); return {}; } },
    running: () => [{ id: 'c1', logPath: path }],
    policy: { maxSizeBytes: 100, maxFiles: 4 },
    clock,
    log: noopLogger,
  });
  return { dir, path, clock, m, reopened };
}

test('a file over maxSize is renamed and reopened; at most maxFiles remain; older rotated files are gzipped', async (t) => {
  const w = await world(t, (p) => writeFile(p, ''));
  const signal = new AbortController().signal;
  await writeFile(w.path, 'small\n');
  await w.m.rotateOnce(signal);
  assert.deepEqual(await readdir(w.dir), ['0.log'], 'under maxSize: nothing happens');
  for (let i = 0; i < 4; i++) {
    await writeFile(w.path, `round ${i} `.padEnd(120, 'x') + '\n');
    await w.m.rotateOnce(signal);
    w.clock.advance(1000);
  }
  const files = (await readdir(w.dir)).sort();
  // kubelet's order (trim, compress, then rotate) leaves the two newest rotated files plain.
  assert.deepEqual(files, ['0.log', '0.log.20260101-000001.gz', '0.log.20260101-000002', '0.log.20260101-000003']);
  assert.match(gunzipSync(await readFile(join(w.dir, '0.log.20260101-000001.gz'))).toString(), /^round 1 x+/);
  assert.match(await readFile(join(w.dir, '0.log.20260101-000003'), 'utf8'), /^round 3 /);
  assert.equal(w.reopened.length, 4);
});

test('a failed ReopenContainerLog undoes the rename', async (t) => {
  const w = await world(t, async () => {
    throw new Error('runtime said no');
  });
  await writeFile(w.path, 'y'.repeat(200));
  await w.m.rotateOnce(new AbortController().signal);
  assert.deepEqual(await readdir(w.dir), ['0.log']);
  assert.equal((await readFile(w.path, 'utf8')).length, 200);
});
