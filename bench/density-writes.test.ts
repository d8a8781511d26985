import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countWrites, writesTable } from './density-writes.js';

const line = (at: string, verb: string, resource: string, user: { username: string; groups?: string[] }, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ kind: 'Event', stage: 'ResponseComplete', requestReceivedTimestamp: new Date(Date.parse(at) - 20).toISOString(), stageTimestamp: at, verb, user, objectRef: { resource, namespace: 'density', ...extra }, responseStatus: { code: extra['code'] ?? 201 } });

test('countWrites groups the window\'s writes by writer, resource and verb, failures apart, leases left out', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'density-writes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const node = { username: 'system:node:h-1', groups: ['system:nodes', 'system:authenticated'] };
  const rs = { username: 'system:serviceaccount:kube-system:replicaset-controller' };
  const file = join(dir, 'audit.log');
  writeFileSync(file, [
    line('2026-12-05T00:00:00.5Z', 'create', 'pods', rs),
    line('2026-12-05T00:00:01Z', 'create', 'pods', rs),
    line('2026-12-05T00:00:01Z', 'patch', 'pods', node, { subresource: 'status' }),
    line('2026-12-05T00:00:02Z', 'patch', 'pods', node, { subresource: 'status' }),
    JSON.stringify({ requestReceivedTimestamp: '2026-12-05T00:00:01.700000Z', stageTimestamp: '2026-12-05T00:00:02Z', verb: 'update', user: rs, objectRef: { resource: 'replicasets', subresource: 'status' }, responseStatus: { code: 409 } }),
    line('2026-12-05T00:00:02Z', 'update', 'leases', node),
    line('2026-12-05T00:00:09Z', 'create', 'pods', rs),
    '',
  ].join('\n'));
  const writes = countWrites(file, Date.parse('2026-12-05T00:00:01Z'), Date.parse('2026-12-05T00:00:05Z'));
  assert.deepEqual(writes, [
    { writer: 'nodes (kubelet)', resource: 'pods/status', verb: 'patch', count: 2, serverP50Ms: 20, serverP99Ms: 20 },
    { writer: 'replicaset-controller', resource: 'pods', verb: 'create', count: 1, serverP50Ms: 20, serverP99Ms: 20 },
    { writer: 'replicaset-controller', resource: 'replicasets/status', verb: 'update → 409', count: 1, serverP50Ms: 300, serverP99Ms: 300 },
  ]);
  const table = writesTable(writes, 2);
  assert.match(table, /^total\s+4\s+2\.00\s*$/m);
  assert.match(table, /pods\/status\s+patch\s+2\s+1\.00\s+20 \/ 20/);
});
