// The storage conformance suite on SQLite, plus what only a file-backed store must show:
// acknowledged writes survive kill -9 of the writing process, revisions keep increasing after
// reopening, and a watcher in another process sees the writes (poll path).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSqliteStore, type WatchEvent } from '../../src/storage/index.js';
import { runStoreConformance } from '../../src/storage/testing/conformance.js';
import { createTempSqliteStore } from '../../src/storage/testing/sqlite.js';
import { pollUntil } from '@nodelet/base';
import { cleanups } from '@nodelet/base/testing';

runStoreConformance('sqlite', async () => createTempSqliteStore());

const WRITER = fileURLToPath(new URL('../../src/storage/testing/durability-writer.ts', import.meta.url));
const KILL_AFTER_ACKS = 300;

describe('sqlite: durability', () => {
  it('every acknowledged write survives kill -9; revisions keep increasing after reopening', async (t) => {
    const cleanup = cleanups(t);
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-sqlite-durability-'));
    cleanup(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');

    // A watcher in this process sees the child's writes through the cross-process poll.
    const observer = createSqliteStore({ path, pollIntervalMs: 50 });
    cleanup(() => observer.close());
    const watchAbort = new AbortController();
    cleanup(() => watchAbort.abort());
    const watched: WatchEvent[] = [];
    const watching = (async () => {
      for await (const ev of observer.watch('/registry/configmaps/durability/', { afterRevision: 0, signal: watchAbort.signal })) {
        watched.push(ev);
      }
    })();

    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', WRITER, path, '100000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const acked = new Map<string, number>();
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
    for await (const line of createInterface({ input: child.stdout })) {
      const [tag, key, rev] = line.split(' ');
      if (tag !== 'ack') continue;
      acked.set(key!, Number(rev));
      if (acked.size === KILL_AFTER_ACKS) child.kill('SIGKILL');
    }
    assert.equal(await exited, 'SIGKILL', `the writer should have been killed mid-stream; stderr: ${stderr}`);
    assert.ok(acked.size >= KILL_AFTER_ACKS, `only ${acked.size} acks; stderr: ${stderr}`);

    const reopened = createSqliteStore({ path });
    cleanup(() => reopened.close());
    for (const [key, rev] of acked) {
      const kv = await reopened.get(key);
      assert.equal(kv?.modRevision, rev, `acknowledged key ${key} (revision ${rev}) is missing after kill -9`);
    }
    const maxAcked = Math.max(...acked.values());
    const current = await reopened.currentRevision();
    assert.ok(current >= maxAcked);
    const next = await reopened.create('/registry/configmaps/durability/after-restart', Buffer.from('{}'));
    assert.ok(next > current, `a new write got revision ${next}, not above ${current}`);

    await pollUntil('the watcher to see the write after restart', () => watched.some((e) => e.revision === next), { timeoutMs: 5000, intervalMs: 10 });
    const revs = watched.map((e) => e.revision);
    assert.deepEqual(revs, [...revs].sort((a, b) => a - b), 'watch events in revision order');
    for (const rev of acked.values()) assert.ok(revs.includes(rev), `watcher missed revision ${rev}`);
    watchAbort.abort();
    await watching;
  });
});
