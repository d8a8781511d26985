import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import { buildContainerConfig, buildSandboxConfig } from './container-config.js';

const paths = { rootDir: '/var/lib/nodelet', podLogsDir: '/var/log/pods' };
const pod = (spec: Partial<NonNullable<Pod['spec']>>): Pod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'uid-1' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const pidOf = (p: Pod) => [
  buildSandboxConfig(p, 0, paths).linux!.securityContext!.namespaceOptions!.pid,
  buildContainerConfig({ pod: p, container: p.spec!.containers[0]!, type: 'regular', restartCount: 0, imageRef: 'sha256:x', env: [], paths, nodeMemoryBytes: 1 << 30, imageUser: {} }).linux!.securityContext!.namespaceOptions!.pid,
];

test('shareProcessNamespace gives sandbox and containers one PID namespace for the pod; hostPID the node\'s', () => {
  assert.deepEqual(pidOf(pod({})), ['CONTAINER', 'CONTAINER']);
  assert.deepEqual(pidOf(pod({ shareProcessNamespace: true })), ['POD', 'POD']);
  assert.deepEqual(pidOf(pod({ hostPID: true, shareProcessNamespace: true })), ['NODE', 'NODE']);
});
