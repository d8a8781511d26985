import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RecordingLogger, cleanups } from '@nodelet/base/testing';
import { CniCode, CniError } from '../errors.js';
import { FakePluginExecutor } from '../testing/fake-executor.js';
import { installNodeletCni, NODELET_CNI_SCRIPT, writeRuntimeConflist, type InstallOptions } from './runtime-files.js';
import { startCniService } from './service.js';
import { pollUntil } from '@nodelet/base';

const RESULT = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/p' }], ips: [{ address: '10.233.7.2/24', gateway: '10.233.7.1', interface: 0 }] };

type Variant = 'script' | 'binary';

/** What nodelet-cni printed (a result, VERSION answer or spec error), loosely typed for asserts. */
interface ShimOut {
  cniVersion?: string;
  code?: number;
  msg: string;
  details: string;
  ips?: unknown[];
  supportedVersions: string[];
}

/** Both builds of nodelet-cni speak the same protocol; the C one is compiled here if gcc exists. */
async function fixture(t: { after(fn: () => Promise<void>): void }, variant: Variant) {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nlc-svc-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  let build: InstallOptions['shim'] = 'script';
  if (variant === 'binary') {
    const out = join(dir, 'nodelet-cni.bin');
    execFileSync('gcc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', out, NODELET_CNI_SCRIPT.replace(/\.mjs$/, '.c')]);
    build = { binary: out };
  }
  const { nodeletCni, kind } = await installNodeletCni(bin, { pluginDirs: ['/usr/lib/cni'], shim: build });
  assert.equal(kind, variant);
  const socketPath = join(dir, 'cni.sock');
  const conflist = await writeRuntimeConflist({ confDir: join(dir, 'net.d'), socketPath });
  const config = JSON.parse(await readFile(conflist, 'utf8'));
  // Async: the service runs in this process, so a sync spawn would block its event loop.
  const shim = (command: string, env: Record<string, string> = {}, cniVersion = '1.0.0', extra: object = {}) =>
    new Promise<{ status: number; out: ShimOut }>((resolve) => {
      const stdin = JSON.stringify({ ...config.plugins[0], cniVersion, name: config.name, ...extra });
      const child = execFile(nodeletCni, [], { env: { PATH: '/usr/bin:/bin', CNI_COMMAND: command, CNI_CONTAINERID: 'sb1', CNI_NETNS: '/run/netns/p', CNI_IFNAME: 'eth0', CNI_PATH: bin, ...env } }, (err, stdout) => {
        resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout ? JSON.parse(stdout) : undefined });
      });
      child.stdin!.end(stdin);
    });
  return { dir, bin, socketPath, shim, config };
}

const variants: Variant[] = existsSync('/usr/bin/gcc') ? ['script', 'binary'] : ['script'];

for (const variant of variants) {
test(`nodelet-cni (${variant}) forwards to the service: ADD result in the runtime version, DEL twice, CHECK; capabilities and CNI_ARGS pass through`, async (t) => {
  const cleanup = cleanups(t);
  const f = await fixture(t, variant);
  const exec = new FakePluginExecutor().plugin('bridge', (c) => (c.command === 'ADD' ? JSON.stringify(RESULT) : c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] }) : '')).plugin('portmap');
  const svc = await startCniService({ socketPath: f.socketPath, binDirs: ['/usr/lib/cni'], cacheDir: f.dir, chain: { podCIDR: '10.233.7.0/24', bridgeName: 'nlc7' }, executor: exec });
  cleanup(() => svc.close());
  assert.equal((await stat(f.socketPath)).mode & 0o777, 0o600);

  const ports = [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }];
  const add = await f.shim('ADD', { CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web' }, '0.4.0', { runtimeConfig: { portMappings: ports } });
  assert.equal(add.status, 0, JSON.stringify(add.out));
  assert.equal(add.out.cniVersion, '0.4.0');
  assert.deepEqual(add.out.ips, [{ version: '4', ...RESULT.ips[0] }]);
  const [bridgeAdd, portmapAdd] = exec.callsOf('ADD');
  assert.equal(bridgeAdd!.env.CNI_ARGS, 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web');
  assert.equal((bridgeAdd!.request.ipam as { ranges: unknown }).ranges instanceof Array, true);
  assert.equal(bridgeAdd!.request.bridge, 'nlc7');
  assert.deepEqual(portmapAdd!.request.runtimeConfig, { portMappings: ports });

  assert.equal((await f.shim('CHECK')).status, 0);
  assert.deepEqual(exec.callsOf('CHECK').map((c) => c.plugin), ['bridge'], 'portmap CHECK skipped for IPv4-only (plugins#819)');
  assert.equal((await f.shim('DEL')).status, 0);
  assert.equal((await f.shim('DEL', { CNI_NETNS: '' })).status, 0, 'second DEL without netns succeeds');
  assert.equal(exec.callsOf('DEL').length, 4);
  assert.equal(exec.callsOf('DEL')[3]!.env.CNI_NETNS, '');

  const version = await f.shim('VERSION');
  assert.ok(version.out.supportedVersions.includes('1.0.0'));
});

test(`nodelet-cni (${variant}): errors come back as spec JSON; no pod CIDR and an unreachable service are code 11`, async (t) => {
  const cleanup = cleanups(t);
  const f = await fixture(t, variant);
  const down = await f.shim('ADD');
  assert.equal(down.status, 1);
  assert.equal(down.out.code, 11);
  assert.match(down.out.details, /is unreachable \((ENOENT|No such file or directory)\)/);

  const exec = new FakePluginExecutor().plugin('bridge').plugin('portmap');
  const svc = await startCniService({ socketPath: f.socketPath, binDirs: ['/x'], cacheDir: f.dir, chain: { bridgeName: 'nlc7' }, executor: exec });
  cleanup(() => svc.close());
  const early = await f.shim('ADD');
  assert.equal(early.out.code, 11);
  assert.match(early.out.details, /no pod CIDR/);
  assert.equal((await f.shim('DEL')).status, 0, 'DEL before any chain exists is a no-op');

  svc.setPodCIDR('10.233.8.0/24');
  const bad = await f.shim('ADD', { CNI_CONTAINERID: '' });
  assert.equal(bad.out.code, 4);
  assert.match(bad.out.msg, /invalid container ID/);
  await assert.rejects(startCniService({ socketPath: f.socketPath, binDirs: ['/x'], chain: {} }), { code: 'ERR_ALREADY_EXISTS' });
  await svc.close();
  await svc.close();
  assert.equal((await f.shim('DEL')).out.code, 11, 'after close');
});
}

test('setPodCIDR validates, switches the chain and writes it to chainConfDir', async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nlc-svc-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const svc = await startCniService({ socketPath: join(dir, 's.sock'), binDirs: ['/x'], cacheDir: dir, chain: { bridgeName: 'nlc7' }, chainConfDir: join(dir, 'chain') });
  cleanup(() => svc.close());
  assert.equal(svc.network(), undefined);
  assert.throws(() => svc.setPodCIDR('10.233.9.0/33'), { code: 'ERR_INVALID_ARGUMENT' });
  assert.equal(svc.network(), undefined, 'a bad CIDR changes nothing');
  svc.setPodCIDR('10.233.9.0/24');
  const file = join(dir, 'chain', '10-nodelet-pods.conflist');
  await pollUntil('the chain conflist to be written', () => existsSync(file), { timeoutMs: 5_000, intervalMs: 10 });
  const written = JSON.parse(await readFile(file, 'utf8'));
  assert.deepEqual(written.plugins.map((p: { type: string }) => p.type), ['bridge', 'portmap']);
  assert.deepEqual(written.plugins[0].ipam.ranges, [[{ subnet: '10.233.9.0/24' }]]);
  assert.equal(svc.network()?.name, 'nodelet-pods');
});

test('a corrupt cached config: DEL deletes with the current chain and logs what to do; CHECK refuses instead of judging another chain', async (t) => {
  const cleanup = cleanups(t);
  const f = await fixture(t, 'script');
  const exec = new FakePluginExecutor().plugin('bridge', (c) => (c.command === 'ADD' ? JSON.stringify(RESULT) : c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] }) : '')).plugin('portmap');
  const log = new RecordingLogger();
  const svc = await startCniService({ socketPath: f.socketPath, binDirs: ['/usr/lib/cni'], cacheDir: f.dir, chain: { podCIDR: '10.233.7.0/24', bridgeName: 'nlc7' }, executor: exec, logger: log });
  cleanup(() => svc.close());
  assert.equal((await f.shim('ADD')).status, 0);
  const file = svc.engine.cache.fileFor('nodelet-pods', 'sb1', 'eth0');
  const entry = JSON.parse(await readFile(file, 'utf8'));
  await writeFile(file, JSON.stringify({ ...entry, config: Buffer.from('{"plugins": [').toString('base64') }));

  await assert.rejects(svc.check({ containerID: 'sb1', ifName: 'eth0', netns: '/run/netns/p' }), (err: CniError) => {
    assert.equal(err.cniCode, CniCode.InvalidNetworkConfig);
    assert.match(err.message, /cached network configuration is corrupt/);
    assert.ok(err.details?.includes(file) && /re-create the pod's sandbox/.test(err.details), err.details);
    return true;
  });
  assert.equal(exec.callsOf('CHECK').length, 0, 'no plugin was asked to check against the current chain');

  assert.equal((await f.shim('DEL')).status, 0, 'DEL still succeeds: the runtime must be able to remove the sandbox');
  assert.deepEqual(exec.callsOf('DEL').map((c) => c.plugin), ['portmap', 'bridge']);
  const [logged] = log.find(/^Cached network configuration is corrupt/, 'error');
  assert.ok(logged, 'the corruption is logged at error level');
  assert.equal(logged.fields['file'], file);
  assert.match(String(logged.fields['fix']), /nodelet doctor --leaks/);
});
