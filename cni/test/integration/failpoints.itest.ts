// Bad input and misbehaving plugins, against the real bridge/host-local/portmap plus the
// failpoint plugin (cni/testdata/failpoint-plugin). In every case: a typed error naming the
// plugin and the reason, and nothing left behind (no veth, no IP reservation, no portmap rule,
// no cache entry). Bridge nlc2, subnet 10.233.2.0/24.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CniEngine, CniError, loadNetworkConfig, parseNetworkConfig, podCniArgs, type PluginConf } from '@nodelet/cni';
import { createFailpointBin, type FailpointControl } from '@nodelet/cni/testing';
import { addNetns, bridgePorts, delLink, delNetns, natCniLines, PLUGIN_DIR, restoreNat, skipReason } from './host.js';

const BRIDGE = 'nlc2';
const NET = 'nlc-it-fp';
const NS = 'nlc-it-fp';
const skip = skipReason();

test('bad input and failing plugins give typed errors and leave nothing behind', { skip, timeout: 90_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-it-fp-'));
  const ipam = join(dir, 'ipam');
  const fp = await createFailpointBin(['fp', 'fpv', 'fp11']);
  await fp.addNonExecutable('noexec');
  await delLink(BRIDGE); // stale bridge of a killed earlier run (the name is ours alone)
  const natBefore = await natCniLines();
  t.after(async () => {
    await delNetns(NS);
    await delLink(BRIDGE);
    await restoreNat(natBefore, [NET]);
    await fp.dispose();
    await rm(dir, { recursive: true, force: true });
  });
  const netns = await addNetns(NS);
  const engine = new CniEngine({ binDirs: [fp.binDir, PLUGIN_DIR], cacheDir: join(dir, 'cache'), execTimeoutMs: 1500, cleanupTimeoutMs: 10_000 });
  const rt = { containerID: 'ctr-fp', netns, ifName: 'eth0', args: podCniArgs({ namespace: 'default', name: 'fp' }), capabilityArgs: { portMappings: [{ hostPort: 18082, containerPort: 80, protocol: 'tcp' }] } };
  const bridge: PluginConf = { type: 'bridge', bridge: BRIDGE, isGateway: true, ipam: { type: 'host-local', dataDir: ipam, ranges: [[{ subnet: '10.233.2.0/24' }]] } };
  const portmap: PluginConf = { type: 'portmap', capabilities: { portMappings: true } };
  const list = (...plugins: PluginConf[]) => parseNetworkConfig(JSON.stringify({ cniVersion: '1.0.0', name: NET, plugins }));
  const reserved = async () => (await readdir(join(ipam, NET)).catch(() => [] as string[])).filter((f) => /^\d/.test(f));

  async function assertNothingLeft(what: string): Promise<void> {
    assert.deepEqual(await bridgePorts(BRIDGE), [], `${what}: no veth on the bridge`);
    assert.deepEqual(await reserved(), [], `${what}: no IP reserved`);
    assert.deepEqual(await engine.cachedAttachments(NET), [], `${what}: no cache entry`);
    assert.ok(![...(await natCniLines())].some((l) => l.includes(`\\"${NET}\\"`)), `${what}: no portmap rule`);
  }

  async function failsMidway(control: FailpointControl, check: (err: CniError) => void): Promise<void> {
    await fp.control('fp', control);
    await assert.rejects(engine.add(list(bridge, portmap, { type: 'fp' }), rt), (err: unknown) => {
      assert.ok(err instanceof CniError, `typed error, got ${String(err)}`);
      assert.equal(err.plugin, 'fp');
      check(err);
      return true;
    });
    const calls = await fp.calls('fp');
    assert.ok(calls.some((c) => c.command === 'DEL'), 'the failed plugin got a DEL too');
    await assertNothingLeft(control.rules?.[0]?.action ?? 'case');
  }

  await t.test('malformed or incomplete conflists are rejected naming file and field', async () => {
    const confDir = join(dir, 'net.d');
    await mkdir(confDir);
    await writeFile(join(confDir, '10-broken.conflist'), '{"cniVersion": "1.0.0", "name": ');
    await writeFile(join(confDir, '20-noplugins.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: NET }));
    await writeFile(join(confDir, '30-notype.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: NET, plugins: [{ bridge: 'x' }] }));
    await assert.rejects(loadNetworkConfig(confDir, { name: NET }), (err: CniError) => {
      assert.equal(err.cniCode, 7);
      assert.match(err.message, /10-broken\.conflist: \(document\): malformed JSON/);
      assert.match(err.message, /20-noplugins\.conflist: plugins: is required/);
      assert.match(err.message, /30-notype\.conflist: plugins\[0\]\.type: is required/);
      return true;
    });
  });

  await t.test('a missing plugin fails before anything runs', async () => {
    await assert.rejects(engine.add(list(bridge, { type: 'nlc-no-such-plugin' }), rt), (err: CniError) => err.plugin === 'nlc-no-such-plugin' && /failed to find plugin/.test(err.message) && err.message.includes(fp.binDir));
    await assertNothingLeft('missing plugin');
  });

  await t.test('a plugin that is not executable', async () => {
    await assert.rejects(engine.add(list(bridge, { type: 'noexec' }), rt), (err: CniError) => err.plugin === 'noexec' && /not executable/.test(err.message));
    await assertNothingLeft('not executable');
  });

  await t.test('an unsupported cniVersion is refused for the plugin that lacks it', async () => {
    // Its own name: the engine caches VERSION answers per binary.
    await fp.control('fpv', { rules: [{ command: 'VERSION', action: 'bad-version' }] });
    await assert.rejects(engine.add(list(bridge, { type: 'fpv' }), rt), (err: CniError) => err.cniCode === 1 && err.plugin === 'fpv' && /plugin supports \[0\.1\.0\]/.test(err.message));
    await assertNothingLeft('bad version');
    // A config whose only version no Debian plugin speaks: bridge itself says why.
    const v11 = parseNetworkConfig(JSON.stringify({ cniVersion: '1.1.0', name: NET, plugins: [bridge] }));
    await assert.rejects(engine.add(v11, rt), (err: CniError) => err.cniCode === 1 && err.plugin === 'bridge');
  });

  await t.test('non-zero exit with error JSON, midway through the chain', () =>
    failsMidway({ rules: [{ command: 'ADD', action: 'fail-json', code: 7, msg: 'invalid config', details: 'failpoint field' }] }, (err) => {
      assert.equal(err.cniCode, 7);
      assert.equal(err.details, 'failpoint field');
    }));

  await t.test('non-zero exit without error JSON (stderr is reported)', () =>
    failsMidway({ rules: [{ command: 'ADD', action: 'fail-plain' }] }, (err) => {
      assert.match(err.message, /netplugin failed with exit status 2/);
      assert.match(err.message, /failpoint: ADD call 1 crashed/);
    }));

  await t.test('garbage on stdout', () =>
    failsMidway({ rules: [{ command: 'ADD', action: 'garbage' }] }, (err) => {
      assert.equal(err.cniCode, 6);
      assert.match(err.message, /invalid JSON: this is not JSON/);
    }));

  await t.test('a plugin that hangs is killed at the timeout', async () => {
    const t0 = performance.now();
    await failsMidway({ rules: [{ command: 'ADD', action: 'hang' }] }, (err) => {
      assert.equal(err.code, 'ERR_DEADLINE_EXCEEDED');
      assert.match(err.message, /timed out after 1500 ms/);
    });
    assert.ok(performance.now() - t0 < 8000, 'did not wait for the hung plugin');
  });

  await t.test('a failing DEL keeps the cache entry so DEL can be retried', async () => {
    await fp.control('fp', { rules: [{ command: 'DEL', call: 1, action: 'fail-json', code: 11, msg: 'busy' }] });
    const l = list(bridge, portmap, { type: 'fp', delegate: 'tuning' });
    await engine.add(l, rt);
    await assert.rejects(engine.del(l, rt), (err: CniError) => err.retryable && err.plugin === 'fp' && err.cniCode === 11);
    assert.equal((await engine.cachedAttachments(NET)).length, 1);
    await engine.del(l, rt);
    await assertNothingLeft('retried DEL');
    const calls = await fp.calls('fp');
    const add = calls.find((c) => c.command === 'ADD')!;
    assert.equal(JSON.parse(add.stdin).prevResult.ips[0].address.startsWith('10.233.2.'), true, 'failpoint wrapper got prevResult');
  });
  await t.test('STATUS and GC reach plugins that speak 1.1.0 (and only those)', async () => {
    await fp.control('fp11', { versions: ['1.0.0', '1.1.0'], rules: [{ command: 'STATUS', call: 2, action: 'fail-json', code: 50, msg: 'plugin not available' }] });
    const l = parseNetworkConfig(JSON.stringify({ cniVersion: '1.1.0', cniVersions: ['1.0.0', '1.1.0'], name: NET, plugins: [bridge, { type: 'fp11' }] }));
    assert.deepEqual(await engine.status(l), { ready: ['fp11'], unchecked: ['bridge'] });
    await assert.rejects(engine.status(l), (err: CniError) => err.cniCode === 50 && err.plugin === 'fp11' && err.code === 'ERR_NETWORK_NOT_READY');
    const added = await engine.add(l, rt);
    assert.equal(added.cniVersion, '1.1.0');
    const report = await engine.gc(l, { validAttachments: [{ containerID: 'still-here', ifName: 'eth0' }] });
    assert.deepEqual(report.deleted, [{ containerID: 'ctr-fp', ifName: 'eth0' }]);
    const gc = (await fp.calls('fp11')).filter((c) => c.command === 'GC');
    assert.equal(gc.length, 1);
    assert.deepEqual(JSON.parse(gc[0]!.stdin)['cni.dev/valid-attachments'], [{ containerID: 'still-here', ifname: 'eth0' }]);
    assert.equal(JSON.parse(gc[0]!.stdin).cniVersion, '1.1.0');
    const adds = (await fp.calls('fp11')).filter((c) => c.command === 'ADD');
    assert.equal(JSON.parse(adds[0]!.stdin).cniVersion, '1.1.0', 'fp11 speaks 1.1.0 while bridge got 1.0.0');
    await assertNothingLeft('gc');
  });
  assert.equal(engine.pending, 0);
});
