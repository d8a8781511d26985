import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ENDPOINTS, parseLabels, resolveEndpoints } from './context.js';
import { camelizeKeys } from './config-file.js';

const noFile = (): string => {
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};
const file = (text: string) => (): string => text;

test('endpoint: flag beats env beats config file beats defaults', () => {
  const cfg = file('runtime-endpoint: unix:///from/config.sock\nimage-endpoint: unix:///img/config.sock\ntimeout: 7\n');
  assert.equal(resolveEndpoints({ runtimeEndpoint: 'unix:///flag.sock' }, { CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock' }, { read: cfg }).runtime, 'unix:///flag.sock');
  assert.equal(resolveEndpoints({}, { CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock' }, { read: cfg }).runtime, 'unix:///env.sock');
  const fromCfg = resolveEndpoints({}, {}, { read: cfg });
  assert.deepEqual([fromCfg.runtime, fromCfg.image, fromCfg.timeoutMs, fromCfg.source], ['unix:///from/config.sock', 'unix:///img/config.sock', 7000, '/etc/crictl.yaml']);
});

test('endpoint: the first default socket that exists; image endpoint follows the runtime', () => {
  const r = resolveEndpoints({}, {}, { read: noFile, exists: (p) => p === '/run/crio/crio.sock' });
  assert.deepEqual([r.runtime, r.image, r.timeoutMs], ['unix:///run/crio/crio.sock', 'unix:///run/crio/crio.sock', 2000]);
  assert.equal(DEFAULT_ENDPOINTS[0], 'unix:///run/containerd/containerd.sock');
});

test('endpoint: nothing found is a clear error naming what was tried and how to choose', () => {
  assert.throws(() => resolveEndpoints({}, {}, { read: noFile, exists: () => false }), /no container runtime found: none of unix:\/\/\/run\/containerd\/containerd\.sock, .* exists; .*-r\/--runtime-endpoint/);
});

test('config file: CRI_CONFIG_FILE / -c must exist; the default may be absent', () => {
  assert.throws(() => resolveEndpoints({ config: '/x.yaml' }, {}, { read: noFile, exists: () => true }), /cannot read config file \/x\.yaml/);
  assert.throws(() => resolveEndpoints({}, { CRI_CONFIG_FILE: '/y.yaml' }, { read: noFile, exists: () => true }), /cannot read config file \/y\.yaml/);
  assert.equal(resolveEndpoints({ timeout: '500ms' }, { IMAGE_SERVICE_ENDPOINT: 'unix:///i.sock' }, { read: noFile, exists: () => true }).image, 'unix:///i.sock');
});

test('labels: key=value pairs', () => {
  assert.deepEqual(parseLabels(['a=b', 'c=d=e']), { a: 'b', c: 'd=e' });
  assert.equal(parseLabels([]), undefined);
  assert.throws(() => parseLabels(['nope']), /invalid label "nope"/);
});

test('config files: snake_case keys become camelCase, map keys stay', () => {
  assert.deepEqual(camelizeKeys({ log_directory: '/l', labels: { my_label: 'x' }, linux: { security_context: { run_as_user: { value: 0 } }, sysctls: { 'net.ipv4.ip_forward': '1' } }, CDI_devices: [] }), {
    logDirectory: '/l',
    labels: { my_label: 'x' },
    linux: { securityContext: { runAsUser: { value: 0 } }, sysctls: { 'net.ipv4.ip_forward': '1' } },
    CDIDevices: [],
  });
});
