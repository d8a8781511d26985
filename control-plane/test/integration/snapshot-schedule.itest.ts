// Scheduled snapshots with two servers on one etcd: only the holder of the nodelet-snapshot Lease
// takes them, one per tick (an every-second schedule, which only the embedded API accepts), each an
// etcd snapshot with its sidecar; when the holder stops, the other server takes over the schedule.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiClient, CONFIGMAPS, EVENTS } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startControlPlane, type ControlPlane } from '../../src/control-plane.js';
import { listSnapshots, type ListedSnapshot } from '../../src/storage/snapshot/snapshots.js';
import { etcdUnavailableReason, startTestEtcd } from '../../src/storage/testing/etcd.js';
import { cleanups } from '@nodelet/base/testing';

const skip = etcdUnavailableReason() ?? false;

test('two servers on one etcd take one scheduled snapshot per tick; the other takes over', { skip, timeout: 120_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-snap-sched-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const etcd = await startTestEtcd();
  cleanup(() => etcd.stop());
  const snapDir = join(dir, 'snapshots');
  const start = (server: string): Promise<ControlPlane> => startControlPlane({
    dataDir: join(dir, server), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger,
    datastoreEndpoint: `etcd://${etcd.endpoint.replace('http://', '')}`, leaderElect: true,
    leaderElection: { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 },
    snapshots: { cron: '* * * * * *', allowSeconds: true, retention: 1_000, dir: snapDir, server },
  });
  const a = await start('a');
  let aClosed = false;
  cleanup(() => (aClosed ? undefined : a.close()));
  const b = await start('b');
  cleanup(() => b.close());

  const good = async (): Promise<ListedSnapshot[]> => (await listSnapshots(snapDir)).filter((s) => s.info);
  await pollUntil('four scheduled snapshots', async () => (await good()).length >= 4, { timeoutMs: 30_000, intervalMs: 200 });
  const first = await good();
  const servers = new Set(first.map((s) => s.info!.server));
  assert.equal(servers.size, 1, `one server takes them: ${[...servers].join(', ')}`);
  const perSecond = new Map<string, number>();
  for (const s of first) perSecond.set(s.info!.createdAt.slice(0, 19), (perSecond.get(s.info!.createdAt.slice(0, 19)) ?? 0) + 1);
  assert.ok([...perSecond.values()].every((n) => n === 1), `one snapshot per tick: ${JSON.stringify([...perSecond])}`);
  for (const s of first) {
    assert.equal(s.info!.kind, 'etcd');
    assert.ok(s.info!.revision > 0 && s.info!.objects > 0, JSON.stringify(s.info));
  }

  const [leader, other] = servers.has('a') ? [a, 'b'] : [b, 'a'];
  await leader.close();
  if (leader === a) aClosed = true;
  await pollUntil(`${other} to take the schedule over`, async () => (await good()).some((s) => s.info!.server === other), { timeoutMs: 30_000, intervalMs: 200 });
});

test('a failed scheduled snapshot is a Warning Event and the server keeps serving', { timeout: 60_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-snap-fail-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const notADir = join(dir, 'snapshots');
  await writeFile(notADir, 'a file where the snapshot directory should be');
  const cp = await startControlPlane({
    dataDir: join(dir, 'server'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger,
    snapshots: { cron: '* * * * * *', allowSeconds: true, retention: 5, dir: notADir, server: 'lab-1' },
  });
  cleanup(() => cp.close());
  const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanup(() => client.close());
  const event = await pollUntil('the SnapshotFailed event', async () =>
    (await client.list(EVENTS, { namespace: 'kube-system' })).items.find((e) => e.reason === 'SnapshotFailed'), { timeoutMs: 20_000, intervalMs: 200 });
  assert.equal(event.type, 'Warning');
  assert.deepEqual([event.involvedObject.kind, event.involvedObject.name], ['Lease', 'nodelet-snapshot']);
  assert.match(event.message ?? '', /^scheduled snapshot on lab-1 failed: .*(EEXIST|ENOTDIR)/);
  await client.create(CONFIGMAPS, { metadata: { name: 'still-serving', namespace: 'default' } });
});
