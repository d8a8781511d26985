import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdResults, type EtcdStatusReply } from './etcd-checks.js';

const member = (endpoint: string, over: Partial<{ isLeader: boolean; leader: string; errors: string[] }> = {}) => ({
  endpoint, ok: true as const, memberId: endpoint.slice(-1), version: '3.4.23', dbSizeBytes: 2 * 1024 * 1024, leader: 'a', isLeader: false, raftIndex: 42, errors: [], ...over,
});

test('one line per member and one for the alarms; an unreachable member and an alarm fail', () => {
  const healthy: EtcdStatusReply = { members: [member('https://m:a', { isLeader: true }), member('https://m:b')], alarms: [] };
  assert.deepEqual(etcdResults(healthy).map((r) => [r.id, r.level, r.message]), [
    ['etcd.member https://m:a', 'pass', 'v3.4.23, db 2.0 MiB, leader, raft index 42'],
    ['etcd.member https://m:b', 'pass', 'v3.4.23, db 2.0 MiB, follower of a, raft index 42'],
    ['etcd.alarms', 'pass', 'no alarms'],
  ]);
  const sick: EtcdStatusReply = {
    members: [member('https://m:a', { isLeader: true }), { endpoint: 'https://m:c', ok: false, error: 'connect ECONNREFUSED' }],
    alarms: [{ memberId: 'a', alarm: 'Nospace' }],
  };
  const r = etcdResults(sick);
  assert.equal(r.find((x) => x.id === 'etcd.member https://m:c')?.level, 'fail');
  const alarm = r.find((x) => x.id === 'etcd.alarms');
  assert.equal(alarm?.level, 'fail');
  assert.match(alarm?.fix ?? '', /nodelet etcd defrag/);
});

test('members that disagree on the leader, or see none, are reported', () => {
  const r = etcdResults({ members: [member('https://m:a', { leader: 'a', isLeader: true }), member('https://m:b', { leader: '0' })], alarms: [] });
  assert.equal(r.find((x) => x.id === 'etcd.member https://m:b')?.level, 'fail');
  assert.equal(r.find((x) => x.id === 'etcd.leader')?.level, 'warn');
});
