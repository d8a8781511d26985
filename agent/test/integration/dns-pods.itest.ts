/**
 * Cluster DNS as pods see it, with the real API server, containerd and the in-process agent: the
 * resolv.conf the runtime writes from the agent's CRI DNSConfig for ClusterFirst, Default and None,
 * and busybox `nslookup` in a pod answered by the agent's resolver. Without the service proxy the
 * pods are pointed at the resolver directly: it listens on 169.254.20.10 (NodeLocal DNSCache's
 * address), which the test adds to the node's `lo` (a local address pods reach through their
 * default route), and `clusterDNS` is that address.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { PODS, SERVICES } from '@nodelet/api';
import { parseResolvConf } from '../../src/dns/resolv-conf.js';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';
import { pollUntil } from '@nodelet/base';

const LOCAL_DNS = '169.254.20.10';

let h: Harness | undefined;
let skip = false;
let added = false;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  spawnSync('ip', ['addr', 'del', `${LOCAL_DNS}/32`, 'dev', 'lo']);
  ip('addr', 'add', `${LOCAL_DNS}/32`, 'dev', 'lo');
  added = true;
  h = await startHarness('dns', { clusterDNS: [LOCAL_DNS], clusterDNSBindAddress: LOCAL_DNS }, 6);
});

after(async () => {
  try {
    await h?.stop();
  } finally {
    if (added) spawnSync('ip', ['addr', 'del', `${LOCAL_DNS}/32`, 'dev', 'lo']);
  }
});

const SLEEP = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'];

async function runningContainer(name: string): Promise<string> {
  const p = await pollUntil(`pod ${name} running`, async () => {
    const pod = await getPod(h!, name);
    return pod.status?.containerStatuses?.[0]?.state?.running ? pod : undefined;
  }, { timeoutMs: 90_000 });
  return p.status!.containerStatuses![0]!.containerID!.replace('containerd://', '');
}

async function exec(containerId: string, cmd: string[]): Promise<{ code: number; out: string }> {
  const r = await h!.agent.cri.runtime.execSync({ containerId, cmd, timeout: 10 });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

test('the runtime writes each pod resolv.conf from the dnsPolicy rules', { timeout: 180_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const img = h!.rt.images.busybox;
  const c = { name: 'c', image: img, imagePullPolicy: 'IfNotPresent' as const, command: SLEEP };
  await h!.api.create(PODS, podSpec(h!, 'cluster-first', { dnsPolicy: 'ClusterFirst', containers: [c] }));
  await h!.api.create(PODS, podSpec(h!, 'default', { dnsPolicy: 'Default', containers: [c] }));
  await h!.api.create(PODS, podSpec(h!, 'none', { dnsPolicy: 'None', dnsConfig: { nameservers: ['192.0.2.53'], searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }] }, containers: [c] }));
  const host = parseResolvConf(await readFile('/etc/resolv.conf', 'utf8'));

  const cf = parseResolvConf((await exec(await runningContainer('cluster-first'), ['cat', '/etc/resolv.conf'])).out);
  assert.deepEqual(cf.nameservers, [LOCAL_DNS]);
  assert.deepEqual(cf.searches, [...new Set(['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', ...host.searches])]);
  assert.deepEqual(cf.options, ['ndots:5']);

  const d = parseResolvConf((await exec(await runningContainer('default'), ['cat', '/etc/resolv.conf'])).out);
  assert.deepEqual(d.nameservers, host.nameservers.slice(0, 3));

  const none = parseResolvConf((await exec(await runningContainer('none'), ['cat', '/etc/resolv.conf'])).out);
  assert.deepEqual(none, { nameservers: ['192.0.2.53'], searches: ['corp.example'], options: ['ndots:2'] });
});

test('busybox nslookup in a ClusterFirst pod is answered by the node-local resolver', { timeout: 120_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const svc = await h!.api.create(SERVICES, { metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } });
  const id = await runningContainer('cluster-first');
  const kubeDns = await exec(id, ['nslookup', '-type=a', 'kube-dns.kube-system.svc.cluster.local']);
  assert.equal(kubeDns.code, 0, kubeDns.out);
  assert.match(kubeDns.out, /Address:\s*10\.96\.0\.10\b/);
  const web = await pollUntil('web to resolve in the pod', async () => {
    const r = await exec(id, ['nslookup', '-type=a', 'web.default.svc.cluster.local']);
    return r.code === 0 && r.out.includes(svc.spec!.clusterIP!) ? r : undefined;
  }, { timeoutMs: 20_000 });
  assert.match(web.out, new RegExp(`Server:\\s*${LOCAL_DNS.replaceAll('.', '\\.')}`));
  const srv = await exec(id, ['nslookup', '-type=srv', '_http._tcp.web.default.svc.cluster.local']);
  assert.match(srv.out, /web\.default\.svc\.cluster\.local/);
  const nx = await exec(id, ['nslookup', '-type=a', 'nope.default.svc.cluster.local']);
  assert.notEqual(nx.code, 0);
  assert.match(nx.out, /NXDOMAIN/);
});
