import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { link, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { dirUsage, DirUsageCache, type DirUsage } from './dir-usage.js';

describe('directory usage (volumes, logs)', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  const tree = async (): Promise<string> => {
    const d = await mkdtemp(join(tmpdir(), 'nodelet-du-'));
    dirs.push(d);
    await mkdir(join(d, 'sub'));
    await writeFile(join(d, 'a'), Buffer.alloc(64 * 1024, 1));
    await writeFile(join(d, 'sub', 'b'), Buffer.alloc(8 * 1024, 1));
    await link(join(d, 'a'), join(d, 'sub', 'a-again')); // a hard link counts once
    await symlink('/etc', join(d, 'etc')); // not followed
    return d;
  };

  it('counts allocated blocks and inodes once each, without following symlinks', async () => {
    const d = await tree();
    const blocks = async (p: string): Promise<number> => (await stat(p)).blocks * 512;
    const u = await dirUsage(d);
    const lstatBlocks = 0; // a short symlink's target lives in its inode
    assert.equal(u.usedBytes, (await blocks(d)) + (await blocks(join(d, 'sub'))) + (await blocks(join(d, 'a'))) + (await blocks(join(d, 'sub', 'b'))) + lstatBlocks);
    assert.equal(u.inodesUsed, 5); // d, sub, a (= a-again), b, the symlink
    assert.equal(u.complete, true);
    assert.deepEqual(await dirUsage(join(d, 'missing')), { usedBytes: 0, inodesUsed: 0, complete: true });
  });

  it('stops at maxEntries and says so', async () => {
    const d = await tree();
    const u = await dirUsage(d, { maxEntries: 2 });
    assert.equal(u.complete, false);
    assert.ok(u.inodesUsed <= 2);
  });

  it('the cache answers at once, walks in the background, and again only after the TTL', async () => {
    const clock = new FakeClock(0);
    const walked: string[] = [];
    const walk = async (dir: string): Promise<DirUsage> => {
      walked.push(dir);
      return { usedBytes: walked.length, inodesUsed: 1, complete: true };
    };
    const cache = new DirUsageCache({ clock, log: noopLogger, ttlMs: 60_000, walk });
    assert.equal(cache.get('/v/a'), undefined);
    await cache.settled();
    assert.deepEqual(cache.get('/v/a'), { usedBytes: 1, inodesUsed: 1, complete: true });
    await cache.settled();
    assert.deepEqual(walked, ['/v/a']);
    clock.advance(60_000);
    assert.equal(cache.get('/v/a')?.usedBytes, 1); // stale value now, fresh one later
    await cache.settled();
    assert.equal(cache.get('/v/a')?.usedBytes, 2);
    cache.retain(new Set());
    assert.equal(cache.get('/v/a'), undefined);
    cache.close();
  });
});
