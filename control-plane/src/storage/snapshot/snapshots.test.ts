// Snapshots of the SQLite store taken while writes go on, restored into a fresh file and read back
// with the real store; naming, listing and retention of the snapshot directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { createTempSqliteStore } from '../testing/sqlite.js';
import { restoreSqliteSnapshot, saveSqliteSnapshot } from './sqlite-snapshot.js';
import { listSnapshots, pruneSnapshots, snapshotFileName, verifySnapshot } from './snapshots.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function tempDir(t: { after(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), 'nodelet-snap-test-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

test('a snapshot taken during a write load restores every write acknowledged at or below its revision', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  const dir = tempDir(t);
  for (let i = 0; i < 50; i++) await store.create(`/registry/configmaps/default/seed-${i}`, enc(`v${i}`));
  // Writers keep going while the snapshot is taken; each acknowledged write is recorded with its revision.
  const acked = new Map<string, number>();
  let stop = false;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      const key = `/registry/configmaps/default/load-${i}`;
      acked.set(key, await store.create(key, enc(`load ${i}`)));
    }
  })();
  while (acked.size < 20) await new Promise((r) => setImmediate(r));
  const snap = await saveSqliteSnapshot({ dbPath: store.path, dir, server: 'lab-1' });
  while (acked.size < snap.revision - 50 + 20) await new Promise((r) => setImmediate(r)); // writes after it too
  stop = true;
  await writer;

  assert.equal(statSync(snap.path).mode & 0o777, 0o600);
  assert.equal(statSync(`${snap.path}.json`).mode & 0o777, 0o600);
  assert.deepEqual(await verifySnapshot(snap.path), { file: snap.file, kind: 'sqlite', server: 'lab-1', createdAt: snap.createdAt, sha256: snap.sha256, revision: snap.revision, objects: snap.objects, bytes: snap.bytes });

  const target = join(tempDir(t), 'server', 'state.db');
  await restoreSqliteSnapshot({ snapshot: snap.path, dbPath: target });
  const restored = createSqliteStore({ path: target });
  t.after(() => restored.close());
  assert.equal(await restored.currentRevision(), snap.revision);
  const keys = (await restored.list('/registry/configmaps/default/')).items.map((kv) => kv.key);
  assert.equal(keys.length, snap.objects);
  for (const [key, rev] of acked) {
    assert.equal(keys.includes(key), rev <= snap.revision, `${key} (revision ${rev}) ${rev <= snap.revision ? 'missing from' : 'in'} a snapshot at ${snap.revision}`);
  }
  assert.ok([...acked.values()].some((r) => r > snap.revision), 'some writes came after the snapshot');
});

test('restore refuses a damaged file, a store in use and an existing store without force', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  await store.create('/registry/secrets/default/s', enc('x'));
  const dir = tempDir(t);
  const snap = await saveSqliteSnapshot({ dbPath: store.path, dir, server: 'lab-1' });
  await assert.rejects(restoreSqliteSnapshot({ snapshot: snap.path, dbPath: store.path }), /exists; stop the server and pass --force/);
  await assert.rejects(restoreSqliteSnapshot({ snapshot: snap.path, dbPath: store.path, force: true }), /is open in process \d+/);
  const bad = Buffer.from(readFileSync(snap.path));
  bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
  writeFileSync(snap.path, bad);
  await assert.rejects(restoreSqliteSnapshot({ snapshot: snap.path, dbPath: join(dir, 'new.db') }), /does not match the sidecar's .*damaged/);
});

test('ls lists newest first and marks an interrupted save; prune keeps N good ones and never the last good one', async (t) => {
  const store = createTempSqliteStore();
  t.after(() => store.close());
  await store.create('/registry/namespaces/default', enc('{}'));
  const dir = tempDir(t);
  const at = (min: number): Date => new Date(Date.UTC(2026, 11, 5, 1, min, 0));
  for (let m = 0; m < 4; m++) await saveSqliteSnapshot({ dbPath: store.path, dir, server: 'lab-1', now: at(m) });
  writeFileSync(join(dir, snapshotFileName('lab-1', 'sqlite', at(10))), 'half'); // no sidecar: interrupted
  const listed = await listSnapshots(dir);
  assert.deepEqual(listed.map((s) => s.file.slice(-20)), ['20261205T011000000Z.db', '20261205T010300000Z.db', '20261205T010200000Z.db', '20261205T010100000Z.db', '20261205T010000000Z.db'].map((f) => f.slice(-20)));
  assert.match(listed[0]!.problem ?? '', /interrupted/);
  await assert.rejects(pruneSnapshots(dir, { retention: 0 }), /at least 1/);
  const removed = await pruneSnapshots(dir, { retention: 2 });
  assert.deepEqual(removed.sort(), [snapshotFileName('lab-1', 'sqlite', at(0)), snapshotFileName('lab-1', 'sqlite', at(1))]);
  const left = await listSnapshots(dir);
  assert.deepEqual(left.filter((s) => s.info).map((s) => s.file), [snapshotFileName('lab-1', 'sqlite', at(3)), snapshotFileName('lab-1', 'sqlite', at(2))]);
  assert.equal(left.length, 3, 'the newer interrupted save is kept (it may still be running)');
});
