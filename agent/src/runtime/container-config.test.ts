import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import { buildContainerConfig, buildSandboxConfig, linuxResources, podDir, volumeDir } from './container-config.js';
import { expandVars, resolveEnv, type EnvSourceReader } from './env.js';
import { containerHash } from '../kubecontainer/labels.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'ns1', uid: 'uid-1', labels: { app: 'web' } },
  spec: {
    nodeName: 'n1',
    terminationGracePeriodSeconds: 5,
    volumes: [{ name: 'scratch', emptyDir: {} }],
    containers: [
      {
        name: 'main',
        image: 'busybox',
        command: ['sh', '-c'],
        args: ['echo $(GREETING) $$(HOME)'],
        workingDir: '/tmp',
        ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81 }],
        env: [
          { name: 'GREETING', value: 'hello' },
          { name: 'FULL', value: '$(GREETING) world' },
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'CM', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } },
          { name: 'PW', valueFrom: { secretKeyRef: { name: 'sec', key: 'pw' } } },
          { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        ],
        volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
        resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
      },
    ],
  },
};
const reader: EnvSourceReader = {
  configMap: async (_ns, name) => (name === 'cfg' ? { k: 'v' } : undefined),
  secret: async (_ns, name) => (name === 'sec' ? { pw: 's3cret' } : undefined),
};
const facts = { podIPs: ['10.234.0.9'], hostIP: '192.0.2.1', nodeName: 'n1' };
const signal = new AbortController().signal;

test('env: values, $(VAR) expansion, fieldRef, configMap/secret refs, resourceFieldRef', async () => {
  const env = await resolveEnv(pod, pod.spec!.containers[0]!, facts, reader, signal);
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
    GREETING: 'hello', FULL: 'hello world', POD: 'web', IP: '10.234.0.9', APP: 'web', CM: 'v', PW: 's3cret', MEM: '128',
  });
  assert.equal(expandVars('$(A)-$$(A)-$(B)', new Map([['A', '1']])), '1-$(A)-$(B)');
});

test('env: a missing configmap key is a config error naming it; optional refs are skipped', async () => {
  const c = { name: 'x', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'missing' } } }] };
  await assert.rejects(resolveEnv(pod, c, facts, reader, signal), (e: Error) => hasCode(e, 'ERR_FAILED_PRECONDITION') && /missing/.test(e.message));
  const opt = { name: 'x', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } }] };
  assert.deepEqual(await resolveEnv(pod, opt, facts, reader, signal), []);
});

test('sandbox config: metadata, labels, log directory, hostPort mappings', () => {
  const s = buildSandboxConfig(pod, 2, { rootDir: '/var/lib/nodelet', podLogsDir: '/var/log/pods' });
  assert.deepEqual(s.metadata, { name: 'web', namespace: 'ns1', uid: 'uid-1', attempt: 2 });
  assert.equal(s.hostname, 'web');
  assert.equal(s.logDirectory, '/var/log/pods/ns1_web_uid-1');
  assert.deepEqual(s.portMappings, [{ protocol: 'TCP', containerPort: 80, hostPort: 8080, hostIp: '' }]);
  assert.equal(s.labels!['io.kubernetes.pod.uid'], 'uid-1');
  assert.equal(s.labels!.app, 'web');
  assert.equal(s.linux!.securityContext!.namespaceOptions!.network, 'POD');
});

test('sandbox config: a hostNetwork pod shares the node UTS namespace and gets no hostname (runc refuses one)', () => {
  const host: Pod = { ...pod, spec: { ...pod.spec!, hostNetwork: true, hostname: 'ignored' } };
  const s = buildSandboxConfig(host, 0, { rootDir: '/var/lib/nodelet', podLogsDir: '/var/log/pods' });
  assert.equal(s.hostname, '');
  assert.equal(s.linux!.securityContext!.namespaceOptions!.network, 'NODE');
  const named: Pod = { ...pod, spec: { ...pod.spec!, hostname: 'web-0', subdomain: 'nginx' } };
  assert.equal(buildSandboxConfig(named, 0, { rootDir: '/r', podLogsDir: '/l' }).hostname, 'web-0');
});

test('container config: command/args expanded, env, emptyDir mount, labels, hash, restartCount, log path', async () => {
  const c = pod.spec!.containers[0]!;
  const env = await resolveEnv(pod, c, facts, reader, signal);
  const cfg = buildContainerConfig({ pod, container: c, type: 'regular', restartCount: 3, imageRef: 'sha256:img', env, paths: { rootDir: '/r', podLogsDir: '/var/log/pods' }, nodeMemoryBytes: 2 ** 30, imageUser: {} });
  assert.deepEqual(cfg.command, ['sh', '-c']);
  assert.deepEqual(cfg.args, ['echo hello $(HOME)']);
  assert.equal(cfg.workingDir, '/tmp');
  assert.deepEqual(cfg.metadata, { name: 'main', attempt: 3 });
  assert.equal(cfg.logPath, 'main/3.log');
  assert.deepEqual(cfg.mounts, [{ containerPath: '/scratch', hostPath: '/r/pods/uid-1/volumes/kubernetes.io~empty-dir/scratch', readonly: false, propagation: 'PROPAGATION_PRIVATE' }]);
  assert.equal(cfg.labels!['io.kubernetes.container.name'], 'main');
  assert.equal(cfg.annotations!['io.kubernetes.container.hash'], containerHash(c));
  assert.equal(cfg.annotations!['io.kubernetes.container.restartCount'], '3');
  assert.equal(cfg.annotations!['io.kubernetes.pod.terminationGracePeriod'], '5');
});

test('resources → CRI linux resources (shares, quota/period, memory limit, QoS OOM score)', () => {
  const r = linuxResources(pod.spec!.containers[0]!, 2 ** 30);
  assert.equal(r.cpuShares, '256');
  assert.equal(r.cpuPeriod, '100000');
  assert.equal(r.cpuQuota, '50000');
  assert.equal(r.memoryLimitInBytes, String(128 * 2 ** 20));
  assert.equal(r.oomScoreAdj, String(1000 - Math.floor((1000 * 64) / 1024)));
  assert.equal(linuxResources({ name: 'be' }, 2 ** 30).cpuShares, '2');
  assert.equal(linuxResources({ name: 'g', resources: { limits: { cpu: '1', memory: '1Gi' } } }, 2 ** 32).oomScoreAdj, '-997');
});

test('OOM score by the pod\'s QoS class, with requests and limits compared as amounts', () => {
  const g = { name: 'g', resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } } };
  assert.equal(linuxResources(g, 2 ** 32).oomScoreAdj, '-997', '"1000m" is "1" and "1024Mi" is "1Gi": Guaranteed');
  assert.equal(linuxResources({ name: 'side' }, 2 ** 32, 'Burstable').oomScoreAdj, '999', 'a container asking nothing in a Burstable pod');
  assert.equal(linuxResources({ name: 'be' }, 2 ** 32, 'BestEffort').oomScoreAdj, '1000');
  assert.equal(linuxResources(g, 2 ** 32, 'Guaranteed').oomScoreAdj, '-997');
});

test('mounts: configMap/secret always read-only, subPath only from a prepared bind mount, no unvalidated names in paths', () => {
  const p: Pod = {
    metadata: { name: 'v', namespace: 'ns1', uid: 'uid-1' },
    spec: {
      volumes: [{ name: 'cfg', configMap: { name: 'c' } }, { name: 'sec', secret: { secretName: 's' } }, { name: 'data', emptyDir: {} }],
      containers: [{ name: 'c', volumeMounts: [
        { name: 'cfg', mountPath: '/cfg', readOnly: false },
        { name: 'sec', mountPath: '/sec' },
        { name: 'data', mountPath: '/sub', subPath: '../../../../etc' },
      ] }],
    },
  };
  const input = { pod: p, container: p.spec!.containers[0]!, type: 'regular' as const, restartCount: 0, imageRef: 'i', env: [], paths: { rootDir: '/r', podLogsDir: '/l' }, nodeMemoryBytes: 0, imageUser: {} };
  // Before, the subPath was joined as written: hostPath "/r/pods/etc".
  assert.throws(() => buildContainerConfig(input), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION') && /subPath of volumeMount "data" of container "c" was not prepared/.test((e as Error).message));
  const cfg = buildContainerConfig({ ...input, subPaths: new Map([[2, '/r/pods/uid-1/volume-subpaths/data/c/2']]) });
  assert.deepEqual(cfg.mounts!.map((m) => [m.containerPath, m.hostPath, m.readonly]), [
    ['/cfg', '/r/pods/uid-1/volumes/kubernetes.io~configmap/cfg', true],
    ['/sec', '/r/pods/uid-1/volumes/kubernetes.io~secret/sec', true],
    ['/sub', '/r/pods/uid-1/volume-subpaths/data/c/2', false],
  ]);
  assert.throws(() => volumeDir('/r', 'uid-1', { name: '../../etc/cron.d', configMap: { name: 'x' } }), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
  assert.throws(() => podDir('/r', '../..'), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'));
});

test('buildContainerConfig: an ephemeral container with a running target joins its PID namespace (CRI TARGET) unless the pod shares one', () => {
  const dbg = { name: 'dbg', image: 'busybox', targetContainerName: 'main' };
  const input = { pod, container: dbg, type: 'ephemeral' as const, restartCount: 0, imageRef: 'sha256:img', env: [], paths: { rootDir: '/r', podLogsDir: '/var/log/pods' }, nodeMemoryBytes: 2 ** 30, imageUser: {} };
  const ns = (p: Pod, targetContainerId?: string) => buildContainerConfig({ ...input, pod: p, targetContainerId }).linux?.securityContext?.namespaceOptions;
  assert.deepEqual(ns(pod, 'ctr-main'), { network: 'POD', pid: 'TARGET', targetId: 'ctr-main', ipc: 'POD' });
  assert.equal(buildContainerConfig({ ...input, targetContainerId: 'ctr-main' }).annotations?.['io.kubernetes.container.type'], 'ephemeral');
  assert.deepEqual(ns(pod), { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
  assert.equal(ns({ ...pod, spec: { ...pod.spec!, shareProcessNamespace: true } }, 'ctr-main')?.pid, 'POD');
  assert.equal(ns({ ...pod, spec: { ...pod.spec!, hostPID: true } }, 'ctr-main')?.pid, 'NODE');
});
