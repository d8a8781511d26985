// A lab whose every process was killed at once (what a machine's restart or an OOM kill of the
// daemons does, and what an interrupted CI run left on this machine: its next run's docs test
// found the state dir and the two-node test the masquerade chain): `lab down` must still remove
// all of it, and say nothing failed. The pod's own processes are left running, as they are when
// only the daemons die: down finds and stops them through the runtime's state on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { labCgroupRoot, labDown, labUp, labVxlanVni } from '@nodelet/cli';
import { findProcesses, waitGone } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { cgroupPathInEveryHierarchy, parseMountinfo } from '@nodelet/base';
import { cleanups, freePort } from '@nodelet/base/testing';
import { inCidr, kubectl, nft, proxyTable } from './helpers.js';

const CLUSTER_CIDR = '10.214.0.0/16';
const BRIDGE = 'nle-kld';
const MASQ = 'masq-10-214-0-0-16';
const SLEEP = '31337'; // the pod's `sleep` argument: how its process is found on the host

/** Everything of the lab in `dir` the host may still hold. */
async function leftovers(dir: string): Promise<string[]> {
  const out: string[] = [];
  const procs = await findProcesses((argv) => argv.some((a) => a.includes(dir)) || (argv[0]?.endsWith('sleep') === true && argv[1] === SLEEP));
  out.push(...procs.map((p) => `process ${p.pid} ${p.argv.join(' ')}`));
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  out.push(...mountinfo.split('\n').filter((l) => l.includes(dir)).map((l) => `mount ${l.split(' ')[4]}`));
  for (const link of [BRIDGE, `nodelet.${labVxlanVni(CLUSTER_CIDR)}`]) if (existsSync(`/sys/class/net/${link}`)) out.push(`link ${link}`);
  const addrs = JSON.parse(spawnSync('ip', ['-json', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout || '[]') as Array<{ ifname: string; addr_info?: Array<{ local: string }> }>;
  out.push(...addrs.flatMap((l) => (l.addr_info ?? []).filter((a) => inCidr(a.local, CLUSTER_CIDR)).map((a) => `address ${a.local} on ${l.ifname}`)));
  const routes = spawnSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' }).stdout.split('\n').filter((r) => /^10\.214\./.test(r));
  out.push(...routes.map((r) => `route ${r}`));
  if (nft(['list', 'chain', 'ip', 'nodelet-pod-network', MASQ]).status === 0) out.push(`chain ip nodelet-pod-network ${MASQ}`);
  if (proxyTable() !== undefined) out.push('table ip nodelet-proxy');
  out.push(...cgroupPathInEveryHierarchy(parseMountinfo(mountinfo), labCgroupRoot(dir)).filter((c) => existsSync(c)).map((c) => `cgroup ${c}`));
  if (existsSync(dir)) out.push(`state dir ${dir}`);
  return out;
}

test('lab down after every lab process was killed: nothing of the lab is left, and no problem is reported', async (t) => {
  if (!requireRoot(t)) return;
  if (proxyTable() !== undefined) return t.skip('a service proxy table (ip nodelet-proxy) is already on this host: another lab runs here');
  const cleanup = cleanups(t);
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-killed-'));
  const [apiPort, regPort, nodeApiPort, healthzPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: CLUSTER_CIDR, bridge: BRIDGE, nodeName: 'killed-node', nodeApiPort, healthzPort };
  // If the test fails before its own down, down runs again (idempotent) and the dir goes.
  cleanup(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });
  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);
  await k('run', 'sleeper', `--image=${up.images.busybox}`, '--restart=Never', '--', 'sleep', SLEEP);
  await k('wait', '--for=condition=Ready', 'pod/sleeper', '--timeout=120s');

  // kill -9 of server, agent, containerd and the shims: every process naming the state dir.
  const daemons = await findProcesses((argv) => argv.some((a) => a.includes(stateDir)));
  const names = daemons.map((p) => p.argv[0]!.split('/').pop()!);
  for (const want of ['node', 'containerd', 'containerd-shim-runc-v2']) assert.ok(names.includes(want), `${want} among the lab's processes: ${names.join(', ')}`);
  for (const p of daemons) process.kill(p.pid, 'SIGKILL');
  for (const p of daemons) assert.ok(await waitGone(p.pid, 10_000), `pid ${p.pid} (${p.argv[0]}) is gone after SIGKILL`);
  const pod = await findProcesses((argv) => argv[0]?.endsWith('sleep') === true && argv[1] === SLEEP);
  assert.equal(pod.length, 1, 'the pod\'s process outlives the daemons');
  t.diagnostic(`killed ${daemons.length} processes (${names.join(', ')}); the pod's sleep (pid ${pod[0]!.pid}) still runs`);

  const r = await labDown(lab);
  assert.deepEqual(r.problems, [], 'lab down reported problems');
  assert.deepEqual(r.stopped, [], 'nothing was running to stop');
  assert.deepEqual(await leftovers(stateDir), [], 'lab down left something of the killed lab');
});
