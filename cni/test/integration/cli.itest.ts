// `nodelet cni` (cli/src/commands/cni.ts) run as a process, cnitool-style, against the real
// plugins: add → ls → check → del, and the spec error JSON with exit 1 on failure.
// Bridge nlc5, subnet 10.233.5.0/24.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { addNetns, bridgePorts, delLink, delNetns, natCniLines, restoreNat, skipReason } from './host.js';

const NODELET = fileURLToPath(new URL('../../../bin/nodelet-dev', import.meta.url));
const NET = 'nlc-it-cli';

function nodelet(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(NODELET, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err }));
  });
}

test('nodelet cni add/ls/check/del/version and errors', { skip: skipReason(), timeout: 90_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-it-cli-'));
  await delLink('nlc5'); // stale bridge of a killed earlier run (the name is ours alone)
  const natBefore = await natCniLines();
  t.after(async () => {
    await delNetns('nlc-it-cli');
    await delLink('nlc5');
    await restoreNat(natBefore, [NET]);
    await rm(dir, { recursive: true, force: true });
  });
  const confDir = join(dir, 'net.d');
  await mkdir(confDir);
  const conf = { cniVersion: '1.0.0', name: NET, plugins: [{ type: 'bridge', bridge: 'nlc5', isGateway: true, ipam: { type: 'host-local', dataDir: join(dir, 'ipam'), ranges: [[{ subnet: '10.233.5.0/24' }]] } }, { type: 'portmap', capabilities: { portMappings: true } }] };
  await writeFile(join(confDir, '10-cli.conflist'), JSON.stringify(conf));
  await writeFile(join(confDir, '20-bad.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'bad', plugins: [{}] }));
  await addNetns('nlc-it-cli');
  const flags = ['cni', '--conf-dir', confDir, '--cache-dir', join(dir, 'cache'), '--bin-dir', '/usr/lib/cni'];
  const env = { CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAME=cli', CAP_ARGS: JSON.stringify({ portMappings: [{ hostPort: 18085, containerPort: 80, protocol: 'tcp' }] }), CNI_CONTAINERID: 'cli-ctr' };

  const add = await nodelet([...flags, 'add', NET, 'nlc-it-cli'], env);
  assert.equal(add.code, 0, add.out + add.err);
  const result = JSON.parse(add.out);
  assert.equal(result.cniVersion, '1.0.0');
  assert.match(result.ips[0].address, /^10\.233\.5\.\d+\/24$/);
  assert.ok([...(await natCniLines())].some((l) => l.includes('--dport 18085')), 'CAP_ARGS reached portmap');

  const ls = JSON.parse((await nodelet([...flags, 'ls', '-o', 'json'])).out);
  assert.deepEqual(ls.networks.map((n: { name?: string; error?: string }) => n.name ?? 'invalid'), [NET, 'invalid']);
  assert.match(ls.networks[1].error, /plugins\[0\]\.type: is required/);
  assert.deepEqual(ls.attachments.map((a: { containerID: string }) => a.containerID), ['cli-ctr']);

  assert.equal((await nodelet([...flags, 'check', NET, 'nlc-it-cli'], env)).code, 0);
  const versions = JSON.parse((await nodelet([...flags, 'version', NET])).out);
  assert.deepEqual(versions.map((v: { type: string; negotiated: string }) => [v.type, v.negotiated]), [['bridge', '1.0.0'], ['portmap', '1.0.0']]);

  const missing = await nodelet([...flags, 'add', 'nope', 'nlc-it-cli'], env);
  assert.equal(missing.code, 1);
  const err = JSON.parse(missing.out);
  assert.equal(err.code, 7);
  assert.match(err.details, /no network "nope"/);

  const del = await nodelet([...flags, 'del', NET, 'nlc-it-cli'], env);
  assert.equal(del.code, 0, del.out + del.err);
  assert.deepEqual(await bridgePorts('nlc5'), []);
  assert.equal(existsSync(join(dir, 'cache', 'results', `${NET}-cli-ctr-eth0`)), false);
  assert.equal((await nodelet([...flags, 'del', NET], env)).code, 0, 'repeat DEL without netns');
});
