// Two nodes that share no link: node 1 (`labUp`) on the host on node network 10.219.0.0/24
// (bridge nle-vrn; the server and registry at 10.219.0.1), node 2 (`labAddNode({ netns: true,
// behindRouter })`) in namespace nodelet-vr-2 on subnet 10.216.0.0/29 behind router namespace
// nodelet-vr-2_router (docs/multi-node-lab.md). The only routes the lab adds are the host's to
// that subnet through the router and node 2's default route to it. Node 1's agent runs the lab's
// default backend, host-gw, which cannot reach across a router and falls back to VXLAN for node 2
// (docs/network.md); node 2's runs `vxlan`. The test checks both agents' routes go through the
// VXLAN device before relying on them, and the pods' MTUs: node 1's the link's, node 2's 50 less.
//
// Pod a on node 1 and pod b on node 2, each behind a ClusterIP Service: a reaches b by pod IP and
// through b's Service, b reaches a the same ways, each packet across through the VXLAN devices
// (their counters move); a 256 KiB answer crosses each way whole too (in full-size segments: b's
// MTU makes both ends' segments fit the tunnel). Nothing is sent to a ClusterIP before the
// sending node's table holds it with its endpoint. Adding node 2 again adopts its namespaces as
// they are. Everything is removed afterwards, which the test checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { stringify as toYaml } from 'yaml';
import { labAddNode, labVxlanVni, netnsName, routerNetnsName, vethName } from '@nodelet/cli';
import { findProcesses } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { inCidr, kubectl, nft, nftMapKeys, proxyTable } from './helpers.js';
import { agentRoutes, GET, startTwoNodeLab } from './two-node-lab.js';

const CLUSTER_CIDR = '10.218.0.0/16';
const NETWORK = '10.219.0.0/24';
const SUBNET = '10.216.0.0/29';
const TAG = 'vr';
const [N1, N2] = ['vr-1', 'vr-2'] as const;
const VXLAN = `nodelet.${labVxlanVni(CLUSTER_CIDR)}`;
/** Bytes of the large answer: many full-size segments. */
const BIG = 256 * 1024;

interface RouteJson { dst: string; gateway?: string; dev: string; protocol?: string }
const routes = (netns?: string): RouteJson[] =>
  JSON.parse(spawnSync('ip', [...(netns ? ['-n', netns] : []), '-json', '-4', 'route', 'show'], { encoding: 'utf8' }).stdout || '[]') as RouteJson[];

/** Packets the VXLAN device of the host or of `netns` has sent and received. */
function vxlanPackets(netns?: string): { tx: number; rx: number } {
  const r = spawnSync('ip', [...(netns ? ['-n', netns] : []), '-json', '-s', 'link', 'show', 'dev', VXLAN], { encoding: 'utf8' });
  const s = (JSON.parse(r.stdout || '[{}]') as Array<{ stats64?: { tx: { packets: number }; rx: { packets: number } } }>)[0]?.stats64;
  return { tx: s?.tx.packets ?? 0, rx: s?.rx.packets ?? 0 };
}

/** What this test may leave behind: nothing. */
function leftovers(dirs: string[]): string[] {
  const out: string[] = [];
  const netns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.split(' ')[0]);
  for (const ns of [netnsName(N2), routerNetnsName(N2)]) if (netns.includes(ns)) out.push(`netns ${ns}`);
  for (const link of [`nle-${TAG}n`, `nle-${TAG}0`, `nle-${TAG}1`, vethName(N2), vethName(routerNetnsName(N2)), VXLAN]) if (existsSync(`/sys/class/net/${link}`)) out.push(`link ${link}`);
  out.push(...routes().filter((r) => [CLUSTER_CIDR, NETWORK, SUBNET].some((c) => inCidr(r.dst.split('/')[0]!, c) || (r.gateway && inCidr(r.gateway, c)))).map((r) => `route ${r.dst} via ${r.gateway ?? '-'} dev ${r.dev}`));
  if (proxyTable() !== undefined) out.push('table ip nodelet-proxy');
  if (nft(['list', 'chain', 'ip', 'nodelet-pod-network', 'masq-10-218-0-0-16']).status === 0) out.push('chain ip nodelet-pod-network masq-10-218-0-0-16');
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => dirs.some((d) => l.includes(d)));
  out.push(...mounts.map((m) => `mount ${m.split(' ')[4]}`));
  return out;
}

test('two nodes behind a router: the agents fall back to VXLAN; pods reach each other by pod IP and ClusterIP both ways', async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  if (spawnSync('nsenter', ['--version']).status !== 0) return t.skip('nsenter not installed (util-linux)');
  const started = Date.now();
  // A lab that fails to start removes itself; one that started goes after the test, node 2 first.
  const lab = await startTwoNodeLab({ tag: TAG, clusterCidr: CLUSTER_CIDR, nodeNames: [N1, N2], routed: { network: NETWORK, subnet: SUBNET, podNetwork: 'vxlan' } });
  t.after(async () => {
    await lab.teardown();
    const procs = await findProcesses((argv) => argv.some((a) => a.includes(lab.dir1) || a.includes(lab.dir2)));
    assert.deepEqual([...leftovers([lab.dir1, lab.dir2]), ...procs.map((p) => `process ${p.pid} ${p.argv.join(' ')}`)], [], 'the test left something behind');
  });
  const ns2 = lab.node2.netns!;
  assert.equal(ns2, netnsName(N2));
  t.diagnostic(`two nodes Ready after ${Date.now() - started} ms; node 2 in ${ns2} at ${lab.node2.ip}`);
  const k = kubectl(lab.up.kubeconfig);

  // 1. The nodes are on two subnets: neither has an address on a subnet holding the other's IP.
  const ips: Record<string, string> = {};
  const cidrs: Record<string, string> = {};
  for (const n of [N1, N2]) {
    ips[n] = (await k('get', 'node', n, '-o', 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')).trim();
    cidrs[n] = (await k('get', 'node', n, '-o', 'jsonpath={.spec.podCIDR}')).trim();
    assert.ok(cidrs[n] && inCidr(cidrs[n]!.split('/')[0]!, CLUSTER_CIDR), `node ${n} podCIDR "${cidrs[n]}"`);
  }
  assert.ok(inCidr(ips[N1]!, NETWORK) && inCidr(ips[N2]!, SUBNET), `node IPs ${ips[N1]} and ${ips[N2]}`);
  const onLink = (netns: string | undefined, peer: string) => routes(netns).some((r) => r.protocol === 'kernel' && r.dst.includes('/') && inCidr(peer, r.dst));
  assert.equal(onLink(undefined, ips[N2]!), false, 'node 2 is on no subnet of the host');
  assert.equal(onLink(ns2, ips[N1]!), false, 'node 1 is on no subnet of node 2');

  // 2. Each agent routes the other's pod CIDR through its VXLAN device (the peer's pod CIDR's
  // network address, held by the peer's device), not via the peer's IP (host-gw).
  const vxlanRoute = (cidr: string) => [cidr, cidr.split('/')[0]!, VXLAN];
  await pollUntil('each agent to route the other node\'s pod CIDR over VXLAN', () =>
    JSON.stringify(agentRoutes(undefined, { dev: true })) === JSON.stringify([vxlanRoute(cidrs[N2]!)]) &&
    JSON.stringify(agentRoutes(ns2, { dev: true })) === JSON.stringify([vxlanRoute(cidrs[N1]!)]), { timeoutMs: 30_000 });
  // No route into the pod network but the agents' and the pod bridges': the lab added only the
  // host's route to node 2's subnet through the router and node 2's default route.
  for (const [where, netns] of [['host', undefined], ['node 2', ns2]] as const) {
    const others = routes(netns).filter((r) => r.protocol !== 'kernel' && r.protocol !== '150');
    assert.ok(others.every((r) => !inCidr(r.dst.split('/')[0]!, CLUSTER_CIDR)), `${where}: only the agent routes into the cluster CIDR: ${JSON.stringify(others)}`);
    if (netns) assert.deepEqual(others.map((r) => [r.dst, r.gateway]), [['default', SUBNET.replace(/0\/29$/, '1')]], 'node 2: the default route through the router, nothing else');
    else assert.ok(others.some((r) => r.dst === SUBNET && inCidr(r.gateway ?? '', NETWORK)), 'host: the route to node 2\'s subnet through the router');
  }

  // 3. Pod a on node 1, pod b on node 2, each an httpd answering its name, each behind a Service.
  const file = `${lab.dir1}/pods.yaml`;
  const web = `mkdir -p /www && hostname > /www/index.html && head -c ${BIG} /dev/zero > /www/big && exec httpd -f -p 8080 -h /www`;
  writeFileSync(file, ([[N1, 'a'], [N2, 'b']] as const).flatMap(([node, name]) => [
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: name } }, spec: {
      nodeSelector: { 'kubernetes.io/hostname': node }, terminationGracePeriodSeconds: 1,
      containers: [{ name: 'httpd', image: lab.up.images.busybox, command: ['sh', '-c', web], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }],
    } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } },
  ]).map((d) => toYaml(d)).join('---\n'));
  await k('apply', '-f', file);
  await k('wait', '--for=condition=Ready', 'pod/a', 'pod/b', '--timeout=90s');
  const pod: Record<string, string> = {};
  const svc: Record<string, string> = {};
  for (const name of ['a', 'b']) {
    pod[name] = (await k('get', 'pod', name, '-o', 'jsonpath={.status.podIP}')).trim();
    svc[name] = (await k('get', 'svc', name, '-o', 'jsonpath={.spec.clusterIP}')).trim();
  }
  assert.ok(inCidr(pod.a!, cidrs[N1]!) && inCidr(pod.b!, cidrs[N2]!), `pod IPs ${pod.a} and ${pod.b} are of their nodes' pod CIDRs`);
  // host-gw gives pods the link's MTU (node 1's node-network bridge), vxlan 50 less (node 2's eth0).
  const mtu = (dev: string, netns?: string) => (JSON.parse(spawnSync('ip', [...(netns ? ['-n', netns] : []), '-json', 'link', 'show', 'dev', dev], { encoding: 'utf8' }).stdout) as Array<{ mtu: number }>)[0]!.mtu;
  const podMtu = async (name: string) => Number((await k('exec', name, '--', 'cat', '/sys/class/net/eth0/mtu')).trim());
  assert.equal(await podMtu('a'), mtu(`nle-${TAG}n`), 'pod a (host-gw) has the link\'s MTU');
  assert.equal(await podMtu('b'), mtu('eth0', ns2) - 50, 'pod b (vxlan) has its node\'s link MTU less the 50 bytes of VXLAN headers');

  // 4. Both ways: by pod IP, then by the other pod's ClusterIP once the sending node's table holds
  // it and its endpoint. The VXLAN devices on both ends carry the packets.
  const before = [vxlanPackets(), vxlanPackets(ns2)];
  for (const [from, to, netns] of [['a', 'b', undefined], ['b', 'a', ns2]] as const) {
    const get = async (host: string, port: number) => (await k('exec', from, '--', 'sh', '-c', GET(host, port))).trim();
    assert.equal(await get(pod[to]!, 8080), to, `${from} → pod ${to} at ${pod[to]}`);
    await pollUntil(`Service ${to} with its endpoint in the table of ${netns ?? 'the host'}`, () =>
      nftMapKeys('service-ips', netns).includes(`${svc[to]} . tcp . 80`) && (proxyTable(netns) ?? '').includes(`dnat to ${pod[to]}:8080`), { timeoutMs: 30_000 });
    assert.equal(await get(svc[to]!, 80), to, `${from} → Service ${to} at ${svc[to]}`);
    // The answer whole: longer than the body (headers first), its last BIG bytes all zeros.
    const [total, nonZero] = (await k('exec', from, '--', 'sh', '-c', `printf 'GET /big HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${svc[to]} 80 > /tmp/big; wc -c < /tmp/big; tail -c ${BIG} /tmp/big | tr -d '\\0' | wc -c`)).trim().split(/\s+/).map(Number);
    assert.ok(total! > BIG && nonZero === 0, `${from} ← Service ${to}: an answer of ${BIG} zero bytes (got ${total} bytes, ${nonZero} of the last ${BIG} not zero)`);
  }
  const after = [vxlanPackets(), vxlanPackets(ns2)];
  for (const [i, where] of ['host', 'node 2'].entries()) {
    assert.ok(after[i]!.tx > before[i]!.tx && after[i]!.rx > before[i]!.rx, `${where}'s ${VXLAN} carried the traffic: ${JSON.stringify(before[i])} → ${JSON.stringify(after[i])}`);
  }
  t.diagnostic(`a ↔ b by pod IP and ClusterIP over VXLAN after ${Date.now() - started} ms`);

  // 5. Adding node 2 again (as after a restart of the machine's lab) adopts its namespace and
  // router as they are: the same address, one route to its subnet, the agents' routes unchanged.
  const again = await labAddNode(lab.node2.options);
  assert.equal(again.ip, lab.node2.ip);
  assert.equal(routes().filter((r) => r.dst === SUBNET).length, 1, 'one host route to node 2\'s subnet');
  assert.deepEqual(agentRoutes(ns2, { dev: true }), [vxlanRoute(cidrs[N1]!)]);
  t.diagnostic(`total ${Date.now() - started} ms`);
});
