// The engine against the real Debian plugins (bridge, host-local, portmap) in network namespaces
// this test creates. Bridge nlc1, subnet 10.233.1.0/24; everything is removed afterwards.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CniEngine, CniError, parseNetworkConfig, podCniArgs, type CniResult } from '@nodelet/cni';
import { addNetns, bridgePorts, delLink, delNetns, inNetns, linkExists, natCniLines, PLUGIN_DIR, restoreNat, skipReason } from './host.js';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nlc1';
const NET = 'nlc-it-plugins';
const skip = skipReason();

function chain(dataDir: string, withPortmap: boolean) {
  const plugins: object[] = [
    { type: 'bridge', bridge: BRIDGE, isGateway: true, ipMasq: false, ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.233.1.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] } },
  ];
  if (withPortmap) plugins.push({ type: 'portmap', snat: true, capabilities: { portMappings: true } });
  return parseNetworkConfig(JSON.stringify({ cniVersion: '1.0.0', name: NET, plugins }));
}

const ipOf = (r: CniResult): string => r.ips![0]!.address.split('/')[0]!;

test('real plugins: ADD, ping, hostPort, CHECK, DEL, GC', { skip, timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-it-'));
  const ipam = join(dir, 'ipam');
  await delLink(BRIDGE); // stale bridge of a killed earlier run (the name is ours alone)
  const natBefore = await natCniLines();
  const names = ['nlc-it-a', 'nlc-it-b', 'nlc-it-c'];
  t.after(async () => {
    for (const n of names) await delNetns(n);
    await delLink(BRIDGE);
    await restoreNat(natBefore, [NET]);
    await rm(dir, { recursive: true, force: true });
  });
  const engine = new CniEngine({ binDirs: [PLUGIN_DIR], cacheDir: join(dir, 'cache'), execTimeoutMs: 20_000 });
  const list = chain(ipam, true);
  const [nsA, nsB, nsC] = await Promise.all(names.map(addNetns));
  const rtA = { containerID: 'ctr-a', netns: nsA!, ifName: 'eth0', args: podCniArgs({ namespace: 'default', name: 'a', uid: 'uid-a', infraContainerID: 'ctr-a' }), capabilityArgs: { portMappings: [{ hostPort: 18081, containerPort: 8080, protocol: 'tcp' }] } };
  const rtB = { containerID: 'ctr-b', netns: nsB!, ifName: 'eth0' };

  await t.test('ADD gives the netns an address on the bridge and a default route', async () => {
    const a = await engine.add(list, rtA);
    assert.match(a.ips![0]!.address, /^10\.233\.1\.\d+\/24$/);
    assert.equal(a.ips![0]!.gateway, '10.233.1.1');
    assert.equal(a.interfaces![a.ips![0]!.interface!]!.name, 'eth0');
    assert.equal(a.interfaces![a.ips![0]!.interface!]!.sandbox, nsA);
    assert.match(await inNetns('nlc-it-a', ['ip', '-4', 'addr', 'show', 'eth0']), new RegExp(`inet ${a.ips![0]!.address.replace(/\./g, '\\.')}`));
    assert.match(await inNetns('nlc-it-a', ['ip', 'route']), /default via 10\.233\.1\.1 dev eth0/);
    assert.equal((await bridgePorts(BRIDGE)).length, 1);
    assert.ok(existsSync(join(ipam, NET, ipOf(a))), 'host-local reserved the IP');
    const cached = await engine.cache.read(NET, 'ctr-a', 'eth0');
    assert.deepEqual(cached?.result?.ips, a.ips);
  });

  await t.test('two netns on the bridge ping each other', async () => {
    const b = await engine.add(list, rtB);
    const a = (await engine.cache.read(NET, 'ctr-a', 'eth0'))!.result as unknown as CniResult;
    await inNetns('nlc-it-a', ['busybox', 'ping', '-c', '1', '-W', '2', ipOf(b)]);
    await inNetns('nlc-it-b', ['busybox', 'ping', '-c', '1', '-W', '2', ipOf(a)]);
  });

  await t.test('hostPort via portmap reaches the pod from the host through 127.0.0.1', async (st) => {
    const server = spawn('ip', ['netns', 'exec', 'nlc-it-a', process.execPath, '-e', "require('net').createServer((s) => s.end('hello from pod')).listen(8080, () => console.log('up'))"], { stdio: ['ignore', 'pipe', 'inherit'] });
    st.after(() => void server.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      server.stdout!.once('data', () => resolve());
      server.once('exit', (c) => reject(new Error(`pod server exited ${c}`)));
    });
    const reply = await new Promise<string>((resolve, reject) => {
      const s = connect(18081, '127.0.0.1');
      let data = '';
      s.on('data', (d) => (data += d));
      s.on('end', () => resolve(data));
      s.on('error', reject);
      s.setTimeout(5000, () => s.destroy(new Error('hostPort connect timed out')));
    });
    assert.equal(reply, 'hello from pod');
    assert.ok([...(await natCniLines())].some((l) => l.includes(`dnat name: \\"${NET}\\" id: \\"ctr-a\\"`)), 'portmap rule names the attachment');
  });

  await t.test('CHECK passes on a healthy attachment and names the problem once the address is gone', async () => {
    const plain = chain(ipam, false);
    const rtC = { containerID: 'ctr-c', netns: nsC!, ifName: 'eth0' };
    const c = await engine.add(plain, rtC);
    await engine.check(plain, rtC);
    await inNetns('nlc-it-c', ['ip', 'addr', 'del', c.ips![0]!.address, 'dev', 'eth0']);
    await assert.rejects(engine.check(plain, rtC), (err: CniError) => {
      assert.equal(err.plugin, 'bridge');
      assert.match(err.message, new RegExp(`${ipOf(c).replace(/\./g, '\\.')}|eth0`));
      return true;
    });
    await engine.del(plain, rtC);
  });

  await t.test('DEL removes the veth, the host-local reservation, the portmap rules and the cache entry', async () => {
    const a = (await engine.cache.read(NET, 'ctr-a', 'eth0'))!.result as unknown as CniResult;
    const hostVeth = a.interfaces!.find((i) => i.name.startsWith('veth'))!.name;
    await engine.del(list, rtA);
    assert.equal(await linkExists(hostVeth), false);
    assert.equal(await linkExists('eth0', 'nlc-it-a'), false);
    assert.equal(existsSync(join(ipam, NET, ipOf(a))), false);
    assert.equal(await engine.cache.read(NET, 'ctr-a', 'eth0'), undefined);
    assert.ok(![...(await natCniLines())].some((l) => l.includes('id: \\"ctr-a\\"')), 'portmap rules gone');
    await engine.del(list, { containerID: 'ctr-a', ifName: 'eth0' }); // repeated DEL without netns
  });

  await t.test('GC removes attachments of vanished containers and keeps valid ones', async () => {
    const d = await addNetns('nlc-it-d');
    names.push('nlc-it-d');
    const gone = await engine.add(list, { containerID: 'ctr-d', netns: d, ifName: 'eth0' });
    await delNetns('nlc-it-d'); // the container vanished without a DEL
    const report = await engine.gc(list, { validAttachments: [{ containerID: 'ctr-b', ifName: 'eth0' }] });
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.deleted, [{ containerID: 'ctr-d', ifName: 'eth0' }]);
    assert.equal(existsSync(join(ipam, NET, ipOf(gone))), false, 'IP released');
    assert.deepEqual((await engine.cachedAttachments(NET)).map((x) => x.containerID), ['ctr-b']);
    await engine.del(list, rtB);
    await pollUntil('bridge ports to go', async () => (await bridgePorts(BRIDGE)).length === 0, { timeoutMs: 5000, intervalMs: 25 });
    assert.deepEqual((await readdir(join(ipam, NET))).filter((f) => /^\d/.test(f)), []);
    assert.equal(engine.pending, 0);
  });
});

