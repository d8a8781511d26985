import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { parseConfigFile, resolveConfig, unknownConfigKeys } from './config.js';

test('defaults follow the kubelet', () => {
  const c = resolveConfig({}, {}, 'Node-A');
  assert.equal(c.nodeName, 'node-a');
  assert.equal(c.port, 10250);
  assert.equal(c.healthzPort, 10248);
  assert.equal(c.healthzBindAddress, '127.0.0.1');
  assert.equal(c.nodeStatusUpdateFrequencyMs, 10_000);
  assert.equal(c.nodeStatusMaxImages, 50);
  assert.equal(resolveConfig(parseConfigFile('nodeStatusMaxImages: -1'), {}, 'h').nodeStatusMaxImages, -1, '-1: every image');
  assert.equal(resolveConfig(parseConfigFile('nodeStatusMaxImages: 0'), {}, 'h').nodeStatusMaxImages, 0);
  assert.equal(c.nodeLeaseDurationSeconds, 40);
  assert.equal(c.maxPods, 110);
  assert.equal(c.runtimeRequestTimeoutMs, 120_000);
  assert.equal(c.imageGCHighThresholdPercent, 85);
  assert.equal(c.imageGCLowThresholdPercent, 80);
  assert.equal(c.imageGCScheduleCron, undefined, 'image GC at the thresholds only unless a schedule is given');
  assert.equal(resolveConfig(parseConfigFile('imageGCScheduleCron: "0 3 * * *"'), {}, 'h').imageGCScheduleCron, '0 3 * * *');
  assert.equal(c.serializeImagePulls, true);
  assert.equal(c.maxParallelImagePulls, 1);
  assert.equal(c.evictionHard['memory.available'], '100Mi');
  assert.equal(c.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock');
  assert.equal(c.anonymousAuth, false);
  assert.equal(c.serverTLSBootstrap, true, 'serving certificate from the cluster unless tlsCertFile is given');
  assert.equal(c.rotateCertificates, true);
  assert.equal(c.shutdownGracePeriodMs, 0, 'graceful node shutdown is off unless configured');
  assert.equal(c.shutdownGracePeriodCriticalPodsMs, 0);
  assert.equal(c.seccompDefault, false, 'Unconfined unless seccompDefault');
  assert.equal(c.configMapAndSecretChangeDetectionStrategy, 'Watch', 'kubelet\'s default');
  assert.deepEqual(c.allowedUnsafeSysctls, []);
  const set = resolveConfig(parseConfigFile('seccompDefault: true\nallowedUnsafeSysctls: ["kernel.msg*", net.core.somaxconn]'), {}, 'h');
  assert.deepEqual([set.seccompDefault, set.allowedUnsafeSysctls], [true, ['kernel.msg*', 'net.core.somaxconn']]);
});

test('graceful node shutdown periods are Go durations; the critical share fits in the whole', () => {
  const c = resolveConfig(parseConfigFile('shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s'), {}, 'h');
  assert.equal(c.shutdownGracePeriodMs, 30_000);
  assert.equal(c.shutdownGracePeriodCriticalPodsMs, 10_000);
});

test('tlsCertFile and tlsPrivateKeyFile come together', () => {
  assert.throws(() => resolveConfig({ tlsCertFile: '/a.crt' }, {}, 'h'), (e: unknown) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /tlsPrivateKeyFile: tlsCertFile and tlsPrivateKeyFile must be given together/.test(String(e)));
  assert.throws(() => resolveConfig({ tlsPrivateKeyFile: '/a.key' }, {}, 'h'), /tlsCertFile: /);
  const c = resolveConfig({ tlsCertFile: '/a.crt', tlsPrivateKeyFile: '/a.key', serverTLSBootstrap: false, rotateCertificates: false }, {}, 'h');
  assert.deepEqual([c.tlsCertFile, c.tlsPrivateKeyFile, c.serverTLSBootstrap, c.rotateCertificates], ['/a.crt', '/a.key', false, false]);
});

test('a KubeletConfiguration file is read with kubelet field names; flags win', () => {
  const file = parseConfigFile(`
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
nodeStatusUpdateFrequency: 1m30s
syncFrequency: 500ms
maxPods: 20
systemReserved: { cpu: 100m, memory: 256Mi }
serializeImagePulls: false
maxParallelImagePulls: 3
staticPodPath: /etc/manifests
containerRuntimeEndpoint: /run/c.sock
podCIDR: 10.1.0.0/24
`);
  const c = resolveConfig(file, { podCidr: '10.2.0.0/24', nodeName: 'n1' }, 'host');
  assert.equal(c.nodeStatusUpdateFrequencyMs, 90_000);
  assert.equal(c.syncFrequencyMs, 500);
  assert.equal(c.maxPods, 20);
  assert.deepEqual(c.systemReserved, { cpu: 0.1, memory: 256 * 2 ** 20 });
  assert.equal(c.maxParallelImagePulls, 3);
  assert.equal(c.staticPodPath, '/etc/manifests');
  assert.equal(c.containerRuntimeEndpoint, 'unix:///run/c.sock');
  assert.equal(c.podCIDR, '10.2.0.0/24');
  assert.equal(c.nodeName, 'n1');
});

const bad: Array<[string, string, RegExp]> = [
  ['nodeStatusUpdateFrequency: ten', 'nodeStatusUpdateFrequency', /duration/],
  ['nodeStatusUpdateFrequency: 0s', 'nodeStatusUpdateFrequency', /positive/],
  ['maxPods: 0', 'maxPods', /integer/],
  ['maxPods: "x"', 'maxPods', /integer/],
  ['nodeStatusMaxImages: -2', 'nodeStatusMaxImages', /integer in \[-1, /],
  ['nodeStatusMaxImages: 1.5', 'nodeStatusMaxImages', /integer/],
  ['imageGCHighThresholdPercent: 101', 'imageGCHighThresholdPercent', /integer/],
  ['imageGCLowThresholdPercent: 90', 'imageGCLowThresholdPercent', /must not exceed/],
  ['imageGCScheduleCron: "0 3 * *"', 'imageGCScheduleCron', /has 4 fields; a schedule has 5/],
  ['imageGCScheduleCron: "0 25 * * *"', 'imageGCScheduleCron', /not a valid cron schedule/],
  ['systemReserved: { cpu: lots }', 'systemReserved.cpu', /quantity/],
  ['kubeReserved: { gpu: "1" }', 'kubeReserved.gpu', /unknown resource/],
  ['evictionHard: { memory.free: 1Mi }', 'evictionHard.memory.free', /unknown eviction signal/],
  ['evictionHard: { nodefs.available: 120% }', 'evictionHard.nodefs.available', /out of range/],
  ['podCIDR: 10.0.0.0', 'podCIDR', /CIDR/],
  ['containerRuntimeEndpoint: tcp://x', 'containerRuntimeEndpoint', /unix socket/],
  ['serializeImagePulls: "yes"', 'serializeImagePulls', /true or false/],
  ['podPidsLimit: 0', 'podPidsLimit', /unlimited/],
  ['allowedUnsafeSysctls: [vm.swappiness]', 'allowedUnsafeSysctls', /not known to be namespaced/],
  ['allowedUnsafeSysctls: net.core.*', 'allowedUnsafeSysctls', /list/],
  ['seccompDefault: "yes"', 'seccompDefault', /true or false/],
  ['configMapAndSecretChangeDetectionStrategy: Cache', 'configMapAndSecretChangeDetectionStrategy', /must be one of Watch, Get/],
  ['cgroupDriver: systemd', 'cgroupDriver', /systemd cgroup driver is not supported/],
  ['cgroupDriver: lxc', 'cgroupDriver', /must be cgroupfs/],
  ['{ cgroupsPerQOS: false, podPidsLimit: 100 }', 'podPidsLimit', /needs cgroupsPerQOS/],
  ['imageServiceEndpoint: unix:///run/other.sock', 'imageServiceEndpoint', /separate image service is not supported/],
  ['cgroupRoot: kubepods', 'cgroupRoot', /absolute/],
  ['cgroupsPerQOS: "no"', 'cgroupsPerQOS', /true or false/],
  ['kind: Pod', 'kind', /KubeletConfiguration/],
  ['shutdownGracePeriod: 30 s', 'shutdownGracePeriod', /duration/],
  ['shutdownGracePeriod: -5', 'shutdownGracePeriod', /zero or positive/],
  ['{ shutdownGracePeriod: 10s, shutdownGracePeriodCriticalPods: 20s }', 'shutdownGracePeriodCriticalPods', /must be <= shutdownGracePeriod/],
];
for (const [yaml, field, why] of bad) {
  test(`invalid config is refused naming the field: ${field}`, () => {
    assert.throws(
      () => resolveConfig(parseConfigFile(yaml), {}, 'h'),
      (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && err.message.includes(`${field}:`) && why.test(err.message),
    );
  });
}

test('malformed YAML is refused', () => {
  assert.throws(() => parseConfigFile('a: [1'), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /YAML/.test(err.message));
  assert.throws(() => resolveConfig({}, { nodeName: 'Bad_Name' }, 'h'), /nodeName/);
});

test('container log rotation: kubelet defaults, file fields, flags win, bad values named', () => {
  const d = resolveConfig({}, {}, 'h');
  assert.equal(d.containerLogMaxSizeBytes, 10 * 1024 * 1024);
  assert.equal(d.containerLogMaxFiles, 5);
  assert.equal(d.containerLogMonitorIntervalMs, 10_000);
  const f = resolveConfig({ containerLogMaxSize: '100Ki', containerLogMaxFiles: 3, containerLogMonitorInterval: '1s' }, {}, 'h');
  assert.deepEqual([f.containerLogMaxSizeBytes, f.containerLogMaxFiles, f.containerLogMonitorIntervalMs], [102_400, 3, 1000]);
  const fl = resolveConfig({ containerLogMaxSize: '100Ki' }, { containerLogMaxSize: '1M', containerLogMaxFiles: 2 }, 'h');
  assert.deepEqual([fl.containerLogMaxSizeBytes, fl.containerLogMaxFiles], [1_000_000, 2]);
  assert.throws(() => resolveConfig({ containerLogMaxFiles: 1 }, {}, 'h'), /containerLogMaxFiles: must be an integer in \[2, ∞\], got 1/);
  assert.throws(() => resolveConfig({}, { containerLogMaxSize: 'lots' }, 'h'), /--container-log-max-size: must be a positive quantity like "10Mi", got "lots"/);
});

test('tracing.endpoint (or --tracing-endpoint) must be an OTLP/HTTP endpoint; unset means no export', () => {
  assert.equal(resolveConfig({}, {}, 'n').tracingEndpoint, undefined);
  assert.equal(resolveConfig({ tracing: { endpoint: 'collector:4318' } }, {}, 'n').tracingEndpoint, 'collector:4318');
  assert.equal(resolveConfig({ tracing: { endpoint: 'collector:4318' } }, { tracingEndpoint: 'http://other:4318' }, 'n').tracingEndpoint, 'http://other:4318');
  assert.throws(() => resolveConfig({ tracing: { endpoint: 'grpc://collector:4317' } }, {}, 'n'), (err: unknown) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /tracing\.endpoint/.test((err as Error).message));
  assert.throws(() => resolveConfig({}, { tracingEndpoint: 'http://[bad' }, 'n'), /--tracing-endpoint/);
});

test('apiServers: --api-servers wins over the file; URLs are checked', () => {
  assert.equal(resolveConfig({}, {}, 'h').apiServers, undefined);
  assert.deepEqual(resolveConfig({ apiServers: ['https://a:6443'] }, {}, 'h').apiServers, ['https://a:6443']);
  assert.deepEqual(resolveConfig({ apiServers: ['https://a:6443'] }, { apiServers: 'https://b:6443,https://c:6443,' }, 'h').apiServers, ['https://b:6443', 'https://c:6443']);
  assert.throws(() => resolveConfig({}, { apiServers: 'b:6443' }, 'h'), (e: unknown) => hasCode(e, 'ERR_INVALID_ARGUMENT') && /apiServers: "b:6443" is not an http\(s\):\/\/ URL/.test(String(e)));
});

test('cgroups: kubelet defaults (cgroupsPerQOS on, root "/", cgroupfs) and file values', () => {
  const d = resolveConfig({}, {}, 'h');
  assert.equal(d.cgroupsPerQOS, true);
  assert.equal(d.cgroupRoot, '/');
  const f = resolveConfig(parseConfigFile('{ cgroupsPerQOS: false, cgroupRoot: /nodelet, cgroupDriver: cgroupfs }'), {}, 'h');
  assert.equal(f.cgroupsPerQOS, false);
  assert.equal(f.cgroupRoot, '/nodelet');
});

test('imageServiceEndpoint: unset or the runtime endpoint (one CRI client serves both)', () => {
  assert.equal(resolveConfig({}, {}, 'h').imageServiceEndpoint, 'unix:///run/containerd/containerd.sock');
  assert.equal(resolveConfig(parseConfigFile('{ containerRuntimeEndpoint: /run/x.sock, imageServiceEndpoint: unix:///run/x.sock }'), {}, 'h').imageServiceEndpoint, 'unix:///run/x.sock');
});

test('providerID and registerNode are carried to the node reporter', () => {
  const c = resolveConfig(parseConfigFile('{ providerID: "nodelet://x", registerNode: false }'), {}, 'h');
  assert.equal(c.providerID, 'nodelet://x');
  assert.equal(c.registerNode, false);
  assert.equal(resolveConfig({}, {}, 'h').providerID, undefined);
});

test('unknown config keys are reported (kubelet strict decoding), known ones are not', () => {
  assert.deepEqual(unknownConfigKeys(parseConfigFile('{ maxPods: 10, cgroupsPerQos: true, evictionHard: {}, featureGates: {} }')), ['cgroupsPerQos', 'featureGates']);
  assert.deepEqual(unknownConfigKeys(parseConfigFile('{ kind: KubeletConfiguration, apiVersion: kubelet.config.k8s.io/v1beta1, proxy: { mode: none } }')), []);
});

test('podNetwork: host-gw by default with flannel\'s VXLAN numbers; --pod-network wins; bad values named', () => {
  assert.deepEqual(resolveConfig({}, {}, 'n').podNetwork, { backend: 'host-gw', vxlan: { vni: 1, port: 8472, device: 'nodelet.1' } });
  const c = resolveConfig({ podNetwork: { backend: 'none', vxlanVNI: 42, vxlanPort: 4789 } }, { podNetwork: 'vxlan' }, 'n');
  assert.deepEqual(c.podNetwork, { backend: 'vxlan', vxlan: { vni: 42, port: 4789, device: 'nodelet.42' } }); // the device follows the VNI (two clusters' agents on one machine never share one)
  assert.throws(() => resolveConfig({}, { podNetwork: 'flannel' }, 'n'), (err: unknown) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /--pod-network/.test((err as Error).message));
  assert.throws(() => resolveConfig({ podNetwork: { backend: 'udp' } }, {}, 'n'), /podNetwork\.backend/);
  assert.throws(() => resolveConfig({ podNetwork: { vxlanVNI: 0 } }, {}, 'n'), /podNetwork\.vxlanVNI/);
  assert.throws(() => resolveConfig({ podNetwork: { vxlanPort: 70000 } }, {}, 'n'), /podNetwork\.vxlanPort/);
});
