// Backup and restore end to end: objects written through a control plane on a TLS etcd; `nodelet
// etcd snapshot save` (the CLI, as an operator runs it) writes a 0600 snapshot and prints its
// sha256; `nodelet etcd snapshot restore` (etcdctl underneath) fills a fresh data dir; a new etcd
// started on it and a new server on that etcd serve the same objects. Also `nodelet etcd status`
// and `defrag` against the live etcd.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApiClient, CONFIGMAPS } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { freePort, startEtcdMember } from '@nodelet/base/testing';
import { startControlPlane } from '../../src/control-plane.js';
import { etcdUnavailableReason, startTestEtcd, type TestEtcd } from '../../src/storage/testing/etcd.js';

const NODELET = join(import.meta.dirname, '../../../bin/nodelet-dev');
const ETCDCTL = process.env.NODELET_ETCDCTL ?? '/usr/bin/etcdctl';
const skip = etcdUnavailableReason() ?? (existsSync(ETCDCTL) ? false : `${ETCDCTL} not found (apt-get install etcd-client): restore runs etcdctl`);
const run = promisify(execFile);
let etcd: TestEtcd | undefined;
let dir = '';

before(async () => {
  if (skip) return;
  etcd = await startTestEtcd({ tls: true });
  dir = await mkdtemp(join(tmpdir(), 'nodelet-etcd-snapshot-'));
});
after(async () => {
  await etcd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const tlsFlags = (): string[] => [`--endpoints=${new URL(etcd!.endpoint).host}`, `--cacert=${etcd!.tls!.caFile}`, `--cert=${etcd!.tls!.certFile}`, `--key=${etcd!.tls!.keyFile}`];
const nodelet = (...args: string[]): Promise<{ stdout: string }> => run(NODELET, args, { timeout: 60_000 });

describe('nodelet etcd: snapshot, restore, status, defrag', { skip }, () => {
  it('objects written through a server come back from a snapshot restored into a fresh etcd', async (t) => {
    const cp = await startControlPlane({
      dataDir: join(dir, 'server-a'),
      datastoreEndpoint: `etcd://${new URL(etcd!.endpoint).host}`,
      etcdTls: { caFile: etcd!.tls!.caFile, certFile: etcd!.tls!.certFile, keyFile: etcd!.tls!.keyFile },
      bindAddress: '127.0.0.1',
      port: 0,
      registryAddress: '',
      controllers: false,
      logger: noopLogger,
    });
    const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
    const names = ['one', 'two', 'three', 'four', 'five'];
    try {
      for (const name of names) await client.create(CONFIGMAPS, { metadata: { name, namespace: 'default' }, data: { name } });
    } finally {
      client.close();
      await cp.close();
    }

    // 1. Save through the CLI.
    const file = join(dir, 'backup.db');
    const saved = await nodelet('etcd', 'snapshot', 'save', file, ...tlsFlags());
    const sha = /^sha256:([0-9a-f]{64})$/m.exec(saved.stdout)?.[1];
    assert.ok(sha, `sha256 printed: ${saved.stdout}`);
    assert.equal(createHash('sha256').update(await readFile(file)).digest('hex'), sha, 'the printed sha256 is the file’s');
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    // 2. Restore into a fresh dir; a non-empty dir is refused first.
    await assert.rejects(nodelet('etcd', 'snapshot', 'restore', file, `--data-dir=${join(dir, 'server-a')}`), /is not empty/);
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const peer = `http://127.0.0.1:${peerPort}`;
    const dataDir = join(dir, 'restored');
    await nodelet('etcd', 'snapshot', 'restore', file, `--data-dir=${dataDir}`, '--name=restored', `--initial-cluster=restored=${peer}`, `--initial-advertise-peer-urls=${peer}`);

    // 3. etcd on the restored data, then a new server on that etcd.
    const clientUrl = `http://127.0.0.1:${clientPort}`;
    // The restored data holds its cluster: no --initial-cluster.
    const restored = await startEtcdMember({ name: 'restored', dataDir, clientUrl, peerUrl: peer, initialCluster: false });
    t.after(() => restored.stop());
    const cp2 = await startControlPlane({ dataDir: join(dir, 'server-b'), datastoreEndpoint: clientUrl, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
    t.after(() => cp2.close());
    const client2 = new ApiClient({ server: cp2.url, token: cp2.adminToken, ca: cp2.caPem });
    t.after(() => client2.close());
    const back = await client2.list(CONFIGMAPS, { namespace: 'default' });
    assert.deepEqual(back.items.map((c) => c.data?.name).filter(Boolean).sort(), [...names].sort());
  });

  it('status shows the member (version, db size, leader, raft index) and no alarms; defrag runs', async () => {
    const { stdout } = await nodelet('etcd', 'status', ...tlsFlags(), '-o', 'json');
    const s = JSON.parse(stdout) as { members: Array<{ ok: boolean; version: string; dbSizeBytes: number; isLeader: boolean; raftIndex: number }>; alarms: unknown[] };
    assert.equal(s.members.length, 1);
    const m = s.members[0]!;
    assert.ok(m.ok && m.isLeader && m.raftIndex > 0 && m.dbSizeBytes > 0 && /^3\.4\./.test(m.version), stdout);
    assert.deepEqual(s.alarms, []);
    const defrag = await nodelet('etcd', 'defrag', ...tlsFlags());
    assert.match(defrag.stdout, /^Defragmented https:\/\/127\.0\.0\.1:\d+: /);
  });

  it('bad flags are usage errors (exit 2) that say what is wrong', async () => {
    await assert.rejects(nodelet('etcd', 'snapshot', 'restore', join(dir, 'nope.db')), (e: { code?: number; stderr?: string }) => e.code === 2 && /needs --data-dir/.test(e.stderr ?? ''));
    await assert.rejects(nodelet('etcd', 'status', '--endpoints=127.0.0.1:1', '--cert=/x'), (e: { code?: number; stderr?: string }) => e.code === 2 && /together/.test(e.stderr ?? ''));
  });
});
