import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CniEngine } from './engine.js';
import { parseNetworkConfig } from './conflist.js';
import { CniError } from './errors.js';
import { FakePluginExecutor } from './testing/fake-executor.js';

const RESULT = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/x' }], ips: [{ address: '10.233.1.5/24', gateway: '10.233.1.1', interface: 0 }] };

async function setup(t: { after(fn: () => Promise<void>): void }, list: object, exec = new FakePluginExecutor()) {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-engine-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const engine = new CniEngine({ binDirs: ['/a', '/b'], cacheDir: dir, executor: exec, cleanupTimeoutMs: 1000 });
  return { engine, exec, dir, net: parseNetworkConfig(JSON.stringify(list)) };
}

const chain = {
  cniVersion: '1.0.0',
  name: 'nlc-unit',
  plugins: [{ type: 'main', ipam: { type: 'host-local' } }, { type: 'ports', capabilities: { portMappings: true, bandwidth: false } }],
};
const rt = { containerID: 'c1', netns: '/run/netns/x', ifName: 'eth0', args: [['K8S_POD_NAME', 'web'] as [string, string]], capabilityArgs: { portMappings: [{ hostPort: 80, containerPort: 8080, protocol: 'tcp' }], bandwidth: { ingressRate: 1 } } };

test('ADD chains prevResult, injects only declared capabilities, strips capabilities and caches the result', async (t) => {
  const exec = new FakePluginExecutor().plugin('main', (c) => (c.command === 'ADD' ? JSON.stringify(RESULT) : JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] }))).plugin('ports');
  const { engine, net } = await setup(t, chain, exec);
  const result = await engine.add(net, rt);
  assert.deepEqual(result.ips, RESULT.ips);
  const [main, ports] = exec.callsOf('ADD');
  assert.equal(main!.request.prevResult, undefined, 'first plugin gets no prevResult');
  assert.equal(main!.request.runtimeConfig, undefined, 'main declares no capabilities');
  assert.equal(main!.env.CNI_ARGS, 'K8S_POD_NAME=web');
  assert.equal(main!.env.CNI_PATH, '/a:/b');
  assert.deepEqual(ports!.request.runtimeConfig, { portMappings: rt.capabilityArgs.portMappings }, 'only declared and true capabilities');
  assert.equal(ports!.request.capabilities, undefined);
  assert.equal(ports!.request.name, 'nlc-unit');
  assert.deepEqual((ports!.request.prevResult as { ips: unknown }).ips, RESULT.ips);
  const cached = JSON.parse(await readFile(engine.cache.fileFor('nlc-unit', 'c1', 'eth0'), 'utf8'));
  assert.equal(cached.kind, 'cniCacheV1');
  assert.equal(Buffer.from(cached.config, 'base64').toString(), JSON.stringify(chain));
  assert.deepEqual(cached.cniArgs, [['K8S_POD_NAME', 'web']]);
  assert.deepEqual(cached.result.ips, RESULT.ips);
});

test('DEL runs in reverse with the cached result, removes the cache and is idempotent without netns', async (t) => {
  const exec = new FakePluginExecutor().plugin('main', (c) => (c.command === 'ADD' ? JSON.stringify(RESULT) : c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] }) : '')).plugin('ports');
  const { engine, net } = await setup(t, chain, exec);
  await engine.add(net, rt);
  await engine.del(net, rt);
  const dels = exec.callsOf('DEL');
  assert.deepEqual(dels.map((c) => c.plugin), ['ports', 'main']);
  for (const d of dels) assert.deepEqual((d.request.prevResult as { ips: unknown }).ips, RESULT.ips);
  assert.equal(await engine.cache.read('nlc-unit', 'c1', 'eth0'), undefined);
  await engine.del(net, { containerID: 'c1', ifName: 'eth0' });
  const again = exec.callsOf('DEL').slice(2);
  assert.equal(again.length, 2);
  assert.equal(again[0]!.env.CNI_NETNS, '');
  assert.equal(again[0]!.request.prevResult, undefined);
  assert.equal(engine.pending, 0);
});

test('a failed ADD midway runs DEL of the whole chain and throws the plugin error', async (t) => {
  const exec = new FakePluginExecutor().plugin('main').plugin('ports', (c) => {
    if (c.command === 'ADD') throw new CniError({ cniCode: 100, msg: 'no iptables', plugin: 'ports' });
    return c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] }) : '';
  });
  const { engine, net } = await setup(t, chain, exec);
  await assert.rejects(engine.add(net, rt), (err: CniError) => err.plugin === 'ports' && err.cniCode === 100);
  assert.deepEqual(exec.callsOf('DEL').map((c) => c.plugin), ['ports', 'main']);
  assert.deepEqual(await engine.cachedAttachments(), []);
});

test('an aborted ADD still rolls back under its own deadline', async (t) => {
  const ac = new AbortController();
  const exec = new FakePluginExecutor().plugin('main').plugin('ports', (c) => {
    if (c.command === 'ADD') {
      ac.abort();
      throw new DOMException('aborted', 'AbortError');
    }
    return c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] }) : '';
  });
  const { engine, net } = await setup(t, chain, exec);
  await assert.rejects(engine.add(net, rt, { signal: ac.signal }), { name: 'AbortError' });
  assert.deepEqual(exec.callsOf('DEL').map((c) => c.plugin), ['ports', 'main']);
});

test('version negotiation: highest offered version each plugin supports; prevResult converted per plugin', async (t) => {
  const exec = new FakePluginExecutor()
    .plugin('main', (c) => (c.command === 'VERSION' ? JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] }) : JSON.stringify(RESULT)))
    .plugin('old', (c) => (c.command === 'VERSION' ? JSON.stringify({ cniVersion: '0.4.0', supportedVersions: ['0.3.1', '0.4.0'] }) : JSON.stringify(c.request.prevResult)));
  const { engine, net } = await setup(t, { cniVersion: '1.1.0', cniVersions: ['0.4.0', '1.0.0'], name: 'nlc-v', plugins: [{ type: 'main' }, { type: 'old' }] }, exec);
  const result = await engine.add(net, rt);
  const [main, old] = exec.callsOf('ADD');
  assert.equal(main!.request.cniVersion, '1.0.0');
  assert.equal(old!.request.cniVersion, '0.4.0');
  assert.deepEqual((old!.request.prevResult as { ips: unknown }).ips, [{ version: '4', ...RESULT.ips[0] }]);
  assert.equal(result.cniVersion, '1.1.0');
  assert.deepEqual(result.ips, RESULT.ips, 'ips[].version dropped again going up');
});

test('unsupported cniVersion fails before any plugin runs, naming the plugin', async (t) => {
  const exec = new FakePluginExecutor().plugin('main');
  const { engine, net } = await setup(t, { cniVersion: '1.1.0', name: 'nlc-v', plugins: [{ type: 'main' }] }, exec);
  await assert.rejects(engine.add(net, rt), (err: CniError) => err.cniCode === 1 && err.plugin === 'main' && /1\.1\.0/.test(err.message));
  assert.equal(exec.callsOf('ADD').length, 0);
  assert.equal(exec.callsOf('DEL').length, 0);
});

test('CHECK: forward with cached result; disableCheck skips; missing cache is ERR_NOT_FOUND', async (t) => {
  const { engine, exec, net } = await setup(t, chain);
  exec.plugin('main').plugin('ports');
  await assert.rejects(engine.check(net, rt), { code: 'ERR_NOT_FOUND' });
  await engine.add(net, rt);
  await engine.check(net, rt);
  assert.deepEqual(exec.callsOf('CHECK').map((c) => c.plugin), ['main', 'ports']);
  assert.ok(exec.callsOf('CHECK')[0]!.request.prevResult);
  const off = parseNetworkConfig(JSON.stringify({ ...chain, disableCheck: true }));
  await engine.check(off, rt);
  assert.equal(exec.callsOf('CHECK').length, 2);
});

test('GC deletes cached attachments not in the valid set with their cached args; 1.1.0 plugins get GC', async (t) => {
  const exec = new FakePluginExecutor().plugin('main');
  exec.versions = ['1.0.0', '1.1.0'];
  const { engine, net } = await setup(t, { cniVersion: '1.1.0', name: 'nlc-gc', plugins: [{ type: 'main' }] }, exec);
  await engine.add(net, { ...rt, containerID: 'keep' });
  await engine.add(net, { ...rt, containerID: 'gone' });
  const report = await engine.gc(net, { validAttachments: [{ containerID: 'keep', ifName: 'eth0' }] });
  assert.deepEqual(report.deleted, [{ containerID: 'gone', ifName: 'eth0' }]);
  assert.deepEqual(report.errors, []);
  const del = exec.callsOf('DEL');
  assert.equal(del.length, 1);
  assert.equal(del[0]!.env.CNI_CONTAINERID, 'gone');
  assert.equal(del[0]!.env.CNI_ARGS, 'K8S_POD_NAME=web');
  const gc = exec.callsOf('GC');
  assert.equal(gc.length, 1);
  assert.deepEqual(gc[0]!.request['cni.dev/valid-attachments'], [{ containerID: 'keep', ifname: 'eth0' }]);
  assert.deepEqual((await engine.cachedAttachments('nlc-gc')).map((a) => a.containerID), ['keep']);
});

test('operations on one attachment never overlap; different attachments run concurrently', async (t) => {
  let running = 0;
  let maxSame = 0;
  const exec = new FakePluginExecutor().plugin('main', async (c) => {
    if (c.command === 'VERSION') return JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] });
    running++;
    maxSame = Math.max(maxSame, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return c.command === 'ADD' ? JSON.stringify(RESULT) : '';
  });
  const { engine, net } = await setup(t, { cniVersion: '1.0.0', name: 'nlc-s', plugins: [{ type: 'main' }] }, exec);
  await Promise.all([engine.add(net, rt), engine.del(net, rt), engine.add(net, rt), engine.del(net, rt)]);
  assert.equal(maxSame, 1);
  assert.deepEqual(exec.calls.filter((c) => c.command !== 'VERSION').map((c) => c.command), ['ADD', 'DEL', 'ADD', 'DEL']);
  assert.equal(engine.pending, 0);
});

test('bad runtime parameters are rejected before any plugin runs', async (t) => {
  const { engine, exec, net } = await setup(t, chain);
  exec.plugin('main').plugin('ports');
  await assert.rejects(engine.add(net, { ...rt, containerID: '-bad' }), { cniCode: 4 });
  await assert.rejects(engine.add(net, { ...rt, ifName: 'a/b' }), { cniCode: 4 });
  await assert.rejects(engine.add(net, { ...rt, netns: undefined }), /netns is required/);
  assert.equal(exec.calls.length, 0);
});

test('GC waits for running operations on the network and holds off new ones', async (t) => {
  const order: string[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const exec = new FakePluginExecutor().plugin('main', async (c) => {
    if (c.command === 'VERSION') return JSON.stringify({ cniVersion: '1.0.0', supportedVersions: ['1.0.0'] });
    order.push(`${c.command}:${c.env.CNI_CONTAINERID}:start`);
    if (c.env.CNI_CONTAINERID === 'slow') await gate;
    order.push(`${c.command}:${c.env.CNI_CONTAINERID}:end`);
    return c.command === 'ADD' ? JSON.stringify(RESULT) : '';
  });
  const { engine, net } = await setup(t, { cniVersion: '1.0.0', name: 'nlc-g', plugins: [{ type: 'main' }] }, exec);
  const slow = engine.add(net, { ...rt, containerID: 'slow' });
  while (order.length === 0) await new Promise((r) => setImmediate(r));
  const gc = engine.gc(net, { validAttachments: [] });
  const after = engine.add(net, { ...rt, containerID: 'after' });
  // The barrier for the negative check: an ADD on another network, started after them, takes the
  // same path (gate, plugin lookup, exec) and is not held by the gate; once it has ended, GC and
  // the later ADD would have started by now if the gate let them.
  const other = parseNetworkConfig(JSON.stringify({ cniVersion: '1.0.0', name: 'nlc-g2', plugins: [{ type: 'main' }] }));
  await engine.add(other, { ...rt, containerID: 'probe' });
  await engine.del(other, { ...rt, containerID: 'probe' });
  assert.deepEqual(order, ['ADD:slow:start', 'ADD:probe:start', 'ADD:probe:end', 'DEL:probe:start', 'DEL:probe:end'], 'GC and the later ADD wait');
  order.length = 1;
  release();
  await Promise.all([slow, gc, after]);
  assert.deepEqual(order, ['ADD:slow:start', 'ADD:slow:end', 'DEL:slow:start', 'DEL:slow:end', 'ADD:after:start', 'ADD:after:end']);
  assert.equal(engine.pending, 0);
});
