/**
 * The agent's pod route manager on three netns "machines" (pod-routes-netns.ts): m1 and m2 share
 * a LAN, m3 sits behind a router. Each machine runs its own RouteManager against an in-memory API
 * server holding the three Nodes, with the default backend (host-gw, VXLAN per peer when the peer
 * is not on a connected subnet). The test adds no pod route itself. A second cluster's manager on
 * m1 (another API server, cluster CIDR and VNI) shows that two clusters on one machine keep apart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pollUntil } from '@nodelet/base';
import { ApiClient, Informer, NODES, type Node } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { commandRunner } from '../../src/proxy/exec.js';
import { RouteManager } from '../../src/network/route-manager.js';
import { VXLAN_ANNOTATION, VXLAN_DEFAULTS, vxlanDeviceName } from '../../src/network/route-plan.js';
import { sh } from './netns-kit.js';
import { RoutedMachines, type Machine } from './pod-routes-netns.js';

const enabled = process.env.AGENT_IT === '1' && process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;
const skip = enabled ? false : 'needs AGENT_IT=1, root and nft (Debian nftables)';

const quietLog = { error() {}, warn() {}, info() {}, debug() {}, child: () => quietLog };
let net: RoutedMachines;
let server: InMemoryApiServer;
let api: ApiClient;
const running = new Map<string, { m: RouteManager; informer: Informer<Node> }>();

function start(machine: Machine): RouteManager {
  const informer = new Informer<Node>({ client: api, resource: NODES });
  const m = new RouteManager({
    backend: 'host-gw', runner: commandRunner(machine.ns), nodeName: machine.name, nodeIP: machine.ip, clusterCIDR: '10.244.0.0/16', log: quietLog, retryMs: 200,
    vxlan: { vni: VXLAN_DEFAULTS.vni, port: VXLAN_DEFAULTS.port, device: VXLAN_DEFAULTS.device },
    publishVtep: async (value) => void (await api.patch(NODES, machine.name, { metadata: { annotations: { [VXLAN_ANNOTATION]: value } } }, { type: 'merge' })),
  });
  m.watch(informer);
  running.set(machine.name, { m, informer });
  return m;
}

async function stop(name: string): Promise<void> {
  const r = running.get(name);
  r?.m.close();
  await r?.informer.close();
  running.delete(name);
}

const json = <T>(ns: string, args: string[]): T => JSON.parse(sh(['ip', 'netns', 'exec', ns, ...args]) || '[]') as T;

before(async () => {
  if (skip) return;
  net = new RoutedMachines();
  net.setup();
  for (const m of net.machines) await net.serve(m.pod.ns);
  await net.serve(net.router); // a host outside the cluster network
  server = await InMemoryApiServer.start();
  api = server.client();
  for (const m of net.machines) {
    await api.create(NODES, { metadata: { name: m.name }, spec: { podCIDR: m.podCIDR }, status: { addresses: [{ type: 'InternalIP', address: m.ip }] } });
  }
  for (const m of net.machines) start(m);
}, { timeout: 60_000 });

after(async () => {
  if (skip) return;
  try {
    for (const name of [...running.keys()]) await stop(name);
    api?.close();
    await server?.close();
  } finally {
    await net?.destroy();
  }
});

test('host-gw to a LAN peer and VXLAN through the router: pods reach each other by IP with their own source address', { skip, timeout: 60_000 }, async () => {
  const [m1, m2, m3] = net.machines as [Machine, Machine, Machine];
  await pollUntil('pod 1 reaches pod 2 (host-gw)', async () => (await net.connectOnce(m1.pod.ns, m2.pod.ip)) === m1.pod.ip, { timeoutMs: 30_000, intervalMs: 200 });
  await pollUntil('pod 1 reaches pod 3 (vxlan)', async () => (await net.connectOnce(m1.pod.ns, m3.pod.ip)) === m1.pod.ip, { timeoutMs: 30_000, intervalMs: 200 });
  await pollUntil('pod 3 reaches pod 2 (vxlan)', async () => (await net.connectOnce(m3.pod.ns, m2.pod.ip)) === m3.pod.ip, { timeoutMs: 30_000, intervalMs: 200 });
  const routes = json<Array<{ dst: string; gateway: string; dev: string }>>(m1.ns, ['ip', '-json', '-4', 'route', 'show', 'proto', '150']);
  assert.deepEqual(routes.map((r) => [r.dst, r.gateway, r.dev]), [['10.244.2.0/24', '192.168.90.2', 'eth0'], ['10.244.3.0/24', '10.244.3.0', 'nodelet.1']]);
  const link = json<Array<{ mtu: number }>>(m1.ns, ['ip', '-json', 'link', 'show', 'nodelet.1']);
  assert.equal(link[0]?.mtu, 1450);
});

test('pod traffic leaving the cluster CIDR is masqueraded to the node address', { skip, timeout: 60_000 }, async () => {
  const [m1, , m3] = net.machines as [Machine, Machine, Machine];
  assert.equal(await net.connectOnce(m1.pod.ns, '192.168.90.254'), m1.ip);
  assert.equal(await net.connectOnce(m3.pod.ns, '192.168.91.254'), m3.ip);
});

test('a restarted manager adopts what it finds and an established cross-node connection lives on', { skip, timeout: 60_000 }, async () => {
  const [m1, , m3] = net.machines as [Machine, Machine, Machine];
  const conn = await net.connection(m1.pod.ns, m3.pod.ip);
  assert.equal(conn.first, m1.pod.ip);
  assert.equal(await conn.send('before'), 'before');
  const mac = (): string | undefined => json<Array<{ address: string }>>(m1.ns, ['ip', '-json', 'link', 'show', 'nodelet.1'])[0]?.address;
  const macBefore = mac();
  const fdbBefore = sh(['ip', 'netns', 'exec', m1.ns, 'bridge', '-json', 'fdb', 'show', 'dev', 'nodelet.1']);
  await stop(m1.name);
  const again = start(m1);
  await pollUntil('the restarted manager to finish a pass over the listed Nodes', () => again.passes > 0 && again.idle(), { timeoutMs: 20_000, intervalMs: 50 });
  // A direct pass over the current Nodes finds nothing to change: it adopted everything.
  assert.equal((await again.sync(await api.list(NODES).then((l) => l.items))).commands, 0);
  assert.equal(sh(['ip', 'netns', 'exec', m1.ns, 'bridge', '-json', 'fdb', 'show', 'dev', 'nodelet.1']), fdbBefore);
  assert.equal(mac(), macBefore, 'the VXLAN device was adopted, not recreated');
  assert.equal(await conn.send('after'), 'after');
});

test('a second cluster\'s manager on the same machine: neither deletes the other\'s routes', { skip, timeout: 60_000 }, async () => {
  const [m1, m2] = net.machines as [Machine, Machine, Machine];
  const other = await InMemoryApiServer.start();
  const oapi = other.client();
  const dev = vxlanDeviceName(2);
  const om = new RouteManager({
    backend: 'host-gw', runner: commandRunner(m1.ns), nodeName: 'o1', nodeIP: m1.ip, clusterCIDR: '10.250.0.0/16', log: quietLog,
    vxlan: { vni: 2, port: VXLAN_DEFAULTS.port, device: dev },
  });
  const routes = (): string[] => json<Array<{ dst: string }>>(m1.ns, ['ip', '-json', '-4', 'route', 'show', 'proto', '150']).map((r) => r.dst).sort();
  try {
    // o3 shares m1's address (a second node in the same namespace): its bridge is local, no route.
    for (const [name, ip, podCIDR] of [['o1', m1.ip, '10.250.1.0/24'], ['o2', m2.ip, '10.250.2.0/24'], ['o3', m1.ip, '10.250.3.0/24']] as const) {
      await oapi.create(NODES, { metadata: { name }, spec: { podCIDR }, status: { addresses: [{ type: 'InternalIP', address: ip }] } });
    }
    const mine = routes();
    const otherNodes = (await oapi.list(NODES)).items;
    await om.sync(otherNodes);
    assert.deepEqual(routes(), [...mine, '10.250.2.0/24'].sort());
    // Full passes of both, each over its own cluster's Nodes: nothing to change, nothing deleted.
    const first = running.get(m1.name)!.m;
    assert.equal((await first.sync((await api.list(NODES)).items)).commands, 0, 'this cluster leaves the other\'s route alone');
    assert.equal((await om.sync(otherNodes)).commands, 0, 'the other cluster leaves this one\'s routes alone');
    assert.deepEqual(routes(), [...mine, '10.250.2.0/24'].sort());
    assert.ok(json<unknown[]>(m1.ns, ['ip', '-json', 'link', 'show', VXLAN_DEFAULTS.device]).length === 1, 'the first cluster\'s VXLAN device stays');
  } finally {
    om.close();
    oapi.close();
    await other.close();
    sh(['ip', '-n', m1.ns, 'route', 'delete', '10.250.2.0/24', 'proto', '150'], true);
    sh(['ip', '-n', m1.ns, 'link', 'delete', dev], true);
  }
});

test('a node that leaves takes its route, FDB and neighbour entries with it', { skip, timeout: 60_000 }, async () => {
  const [m1, m2, m3] = net.machines as [Machine, Machine, Machine];
  await api.delete(NODES, m3.name);
  await pollUntil('m1 and m2 to drop node 3', () => [m1, m2].every((m) =>
    json<Array<{ dst: string }>>(m.ns, ['ip', '-json', '-4', 'route', 'show', 'proto', '150']).every((r) => r.dst !== m3.podCIDR)
    && json<Array<{ dst?: string }>>(m.ns, ['bridge', '-json', 'fdb', 'show', 'dev', 'nodelet.1']).every((f) => f.dst !== m3.ip)
    && json<Array<{ dst: string }>>(m.ns, ['ip', '-json', 'neigh', 'show', 'dev', 'nodelet.1', 'nud', 'permanent']).every((n) => n.dst !== '10.244.3.0')), { timeoutMs: 20_000, intervalMs: 100 });
  assert.equal(await net.connectOnce(m1.pod.ns, m2.pod.ip), m1.pod.ip, 'the remaining peer is still reached');
});
