import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noopLogger, pollUntil } from '@nodelet/base';
import type { Node } from '@nodelet/api';
import type { CommandRunner } from '../proxy/exec.js';
import { cidrWithin, diffPlan, inCidr, masqueradeScript, planPeers, podGateway, VXLAN_ANNOTATION, vxlanDeviceName, type Peer, type RoutePlan } from './route-plan.js';
import { RouteManager, peersFromNodes, uplinkMtu } from './route-manager.js';

const DEV = 'nodelet.1';
const CLUSTER = '10.244.0.0/16';
const near: Peer = { name: 'b', ip: '192.168.5.3', podCIDR: '10.244.1.0/24', vtepMAC: '0A:00:00:00:00:0B' };
const far: Peer = { name: 'c', ip: '172.30.0.9', podCIDR: '10.244.2.0/24', vtepMAC: '0a:00:00:00:00:0c' };
const empty: RoutePlan = { routes: [], fdb: [], neigh: [] };

test('cidr helpers', () => {
  assert.equal(inCidr('192.168.5.3', '192.168.5.2/24'), true);
  assert.equal(inCidr('192.168.6.3', '192.168.5.2/24'), false);
  assert.equal(podGateway('10.244.3.0/24'), '10.244.3.0');
  assert.equal(cidrWithin('10.244.3.0/24', CLUSTER), true);
  assert.equal(cidrWithin('10.244.3.7', CLUSTER), true);
  assert.equal(cidrWithin('10.0.0.0/8', CLUSTER), false);
  assert.equal(cidrWithin('10.245.0.0/24', CLUSTER), false);
  assert.equal(vxlanDeviceName(7), 'nodelet.7');
  assert.equal(vxlanDeviceName(16_777_215), 'nlvx.16777215');
});

test('scope: a peer whose pod CIDR is outside the cluster CIDR, or that shares this machine\'s address, gets nothing', () => {
  const otherCluster: Peer = { name: 'x', ip: '192.168.5.9', podCIDR: '10.250.1.0/24', vtepMAC: '0a:00:00:00:00:09' };
  const sameMachine: Peer = { name: 'y', ip: '192.168.5.2', podCIDR: '10.244.5.0/24' };
  const plan = planPeers({ backend: 'host-gw', peers: [near, otherCluster, sameMachine], connected: ['192.168.5.2/24'], own: ['192.168.5.2'], clusterCIDR: CLUSTER, vxlanDevice: DEV });
  assert.deepEqual(plan, { routes: [{ dst: '10.244.1.0/24', via: '192.168.5.3' }], fdb: [], neigh: [] });
});

test('masquerade: one chain per cluster CIDR, rewritten without touching the table\'s other chains', () => {
  assert.equal(masqueradeScript('10.244.0.0/16'), [
    'table ip nodelet-pod-network {',
    '  chain masq-10-244-0-0-16 {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    '  }',
    '}',
    'flush chain ip nodelet-pod-network masq-10-244-0-0-16',
    'add rule ip nodelet-pod-network masq-10-244-0-0-16 ip saddr 10.244.0.0/16 ip daddr != 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random',
    '',
  ].join('\n'));
});

test('host-gw routes a peer on a connected subnet through it, and falls back to vxlan for one that is not', () => {
  const plan = planPeers({ backend: 'host-gw', peers: [far, near], connected: ['192.168.5.2/24'], clusterCIDR: CLUSTER, vxlanDevice: DEV });
  assert.deepEqual(plan.routes, [
    { dst: '10.244.1.0/24', via: '192.168.5.3' },
    { dst: '10.244.2.0/24', via: '10.244.2.0', dev: DEV },
  ]);
  assert.deepEqual(plan.fdb, [{ mac: '0a:00:00:00:00:0c', dst: '172.30.0.9' }]);
  assert.deepEqual(plan.neigh, [{ ip: '10.244.2.0', mac: '0a:00:00:00:00:0c' }]);
});

test('vxlan backend tunnels even to a connected peer; a peer without a VTEP yet gets nothing; none plans nothing', () => {
  const plan = planPeers({ backend: 'vxlan', peers: [near, { ...far, vtepMAC: undefined }], connected: ['192.168.5.2/24'], clusterCIDR: CLUSTER, vxlanDevice: DEV });
  assert.deepEqual(plan.routes, [{ dst: '10.244.1.0/24', via: '10.244.1.0', dev: DEV }]);
  assert.deepEqual(plan.fdb, [{ mac: '0a:00:00:00:00:0b', dst: '192.168.5.3' }]);
  assert.deepEqual(planPeers({ backend: 'none', peers: [near], connected: ['192.168.5.2/24'], clusterCIDR: CLUSTER, vxlanDevice: DEV }), empty);
});

test('diff: nothing to do when actual matches, replace what is missing or moved, delete what no peer claims', () => {
  const want = planPeers({ backend: 'host-gw', peers: [near, far], connected: ['192.168.5.2/24'], clusterCIDR: CLUSTER, vxlanDevice: DEV });
  assert.deepEqual(diffPlan(want, want, DEV), []);
  const stale: RoutePlan = {
    routes: [{ dst: '10.244.1.0/24', via: '192.168.5.99' }, { dst: '10.244.9.0/24', via: '192.168.5.9' }],
    fdb: [{ mac: '0a:00:00:00:00:09', dst: '172.30.0.1' }],
    neigh: [{ ip: '10.244.9.0', mac: '0a:00:00:00:00:09' }],
  };
  assert.deepEqual(diffPlan(want, stale, DEV), [
    ['ip', 'route', 'replace', '10.244.1.0/24', 'via', '192.168.5.3', 'proto', '150'],
    ['ip', 'route', 'replace', '10.244.2.0/24', 'via', '10.244.2.0', 'dev', DEV, 'onlink', 'proto', '150'],
    ['ip', 'route', 'delete', '10.244.9.0/24', 'proto', '150'],
    ['bridge', 'fdb', 'replace', '0a:00:00:00:00:0c', 'dev', DEV, 'dst', '172.30.0.9', 'self', 'permanent'],
    ['bridge', 'fdb', 'delete', '0a:00:00:00:00:09', 'dev', DEV, 'dst', '172.30.0.1', 'self'],
    ['ip', 'neigh', 'replace', '10.244.2.0', 'lladdr', '0a:00:00:00:00:0c', 'dev', DEV, 'nud', 'permanent'],
    ['ip', 'neigh', 'delete', '10.244.9.0', 'dev', DEV],
  ]);
});

const node = (name: string, ip: string, podCIDR: string, annotations?: Record<string, string>): Node => ({
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { podCIDR },
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
});

test('peers from Nodes: self, nodes without a pod CIDR and bad annotations are left out', () => {
  const nodes: Node[] = [
    node('a', '192.168.5.2', '10.244.0.0/24'),
    node('b', '192.168.5.3', '10.244.1.0/24', { [VXLAN_ANNOTATION]: '{"vni":1,"vtepMAC":"0a:00:00:00:00:0b"}' }),
    node('c', '192.168.5.4', '10.244.2.0/24', { [VXLAN_ANNOTATION]: 'not json' }),
    { metadata: { name: 'd' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.5.5' }] } },
  ];
  assert.deepEqual(peersFromNodes(nodes, 'a'), [
    { name: 'b', ip: '192.168.5.3', podCIDR: '10.244.1.0/24', vtepMAC: '0a:00:00:00:00:0b' },
    { name: 'c', ip: '192.168.5.4', podCIDR: '10.244.2.0/24' },
  ]);
});

/** A fake host at the process boundary: answers the -json reads from `state`, records every write. */
function fakeHost(state: { routes: unknown[]; link?: unknown }): { runner: CommandRunner; writes: string[] } {
  const writes: string[] = [];
  const addrs = [{ ifname: 'lo', addr_info: [{ local: '127.0.0.1', prefixlen: 8 }] }, { ifname: 'eth0', mtu: 1500, addr_info: [{ local: '192.168.5.2', prefixlen: 24 }] }];
  const runner: CommandRunner = {
    async run(argv, o) {
      const a = argv.join(' ') + (o.input ? ` <<${o.input.split('\n').find((l) => l.includes('masquerade')) ?? ''}` : '');
      const ok = (stdout: string) => ({ code: 0, stdout, stderr: '' });
      if (a === 'ip -json -4 addr show') return ok(JSON.stringify(addrs));
      if (a === 'ip -json -4 route show proto 150') return ok(JSON.stringify(state.routes));
      if (a.startsWith('ip -json -details link show')) return state.link ? ok(JSON.stringify([state.link])) : { code: 1, stdout: '', stderr: 'Device does not exist' };
      if (a.startsWith('bridge -json fdb show') || a.startsWith('ip -json -4 neigh show')) return ok('[]');
      writes.push(a);
      if (argv[1] === 'route' && argv[2] === 'replace') state.routes.push({ dst: argv[3], gateway: argv[5], dev: argv[6] === 'dev' ? argv[7] : 'eth0' });
      if (a.startsWith('ip link add')) state.link = { ifname: DEV, address: '0a:00:00:00:00:0a', linkinfo: { info_kind: 'vxlan', info_data: { id: 1, port: 8472, local: '192.168.5.2' } } };
      return ok('');
    },
    stream: () => Promise.resolve(0),
  };
  return { runner, writes };
}

test('manager: creates the VXLAN device at the uplink MTU minus 50, publishes its MAC, masquerades once, routes the peer', async () => {
  const host = fakeHost({ routes: [] });
  const published: string[] = [];
  const m = new RouteManager({ backend: 'host-gw', runner: host.runner, nodeName: 'a', nodeIP: '192.168.5.2', clusterCIDR: CLUSTER, vxlan: { vni: 1, port: 8472, device: DEV }, log: noopLogger, publishVtep: async (v) => void published.push(v) });
  const nodes = [node('a', '192.168.5.2', '10.244.0.0/24'), node('b', '192.168.5.3', '10.244.1.0/24')];
  await m.sync(nodes);
  assert.deepEqual(host.writes, [
    `ip link add ${DEV} type vxlan id 1 local 192.168.5.2 dstport 8472 nolearning`,
    `ip link set ${DEV} mtu 1450`,
    `ip link set ${DEV} up`,
    `ip addr replace 10.244.0.0/32 dev ${DEV}`,
    'ip route replace 10.244.1.0/24 via 192.168.5.3 proto 150',
    'nft -f - <<add rule ip nodelet-pod-network masq-10-244-0-0-16 ip saddr 10.244.0.0/16 ip daddr != 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random',
  ]);
  host.writes.length = 0;
  await m.sync(nodes);
  assert.deepEqual(host.writes, [`ip link set ${DEV} up`, `ip addr replace 10.244.0.0/32 dev ${DEV}`], 'a second pass only repeats the idempotent device steps');
  assert.deepEqual(published, ['{"vni":1,"vtepMAC":"0a:00:00:00:00:0a"}']);
  assert.equal(await uplinkMtu(host.runner, '192.168.5.2', 50), 1450);
  m.close();
});

test('manager: a restart adopts a matching device and deletes only routes of nodes that are gone, never another cluster\'s', async () => {
  const link = { ifname: DEV, address: '0a:00:00:00:00:0a', linkinfo: { info_kind: 'vxlan', info_data: { id: 1, port: 8472, local: '192.168.5.2' } } };
  // 10.250.2.0/24 carries the same protocol but lies outside this cluster's CIDR: another cluster's agent's.
  const host = fakeHost({ link, routes: [{ dst: '10.244.1.0/24', gateway: '192.168.5.3', dev: 'eth0' }, { dst: '10.244.7.0/24', gateway: '192.168.5.7', dev: 'eth0' }, { dst: '10.250.2.0/24', gateway: '192.168.5.8', dev: 'eth0' }] });
  const m = new RouteManager({ backend: 'host-gw', runner: host.runner, nodeName: 'a', nodeIP: '192.168.5.2', clusterCIDR: CLUSTER, vxlan: { vni: 1, port: 8472, device: DEV }, log: noopLogger });
  await m.sync([node('a', '192.168.5.2', '10.244.0.0/24'), node('b', '192.168.5.3', '10.244.1.0/24')]);
  assert.deepEqual(host.writes.filter((w) => !w.startsWith('nft')), [`ip link set ${DEV} up`, `ip addr replace 10.244.0.0/32 dev ${DEV}`, 'ip route delete 10.244.7.0/24 proto 150']);
  m.close();
});

test('manager: a device with another VNI is recreated', async () => {
  const link = { ifname: DEV, address: '0a:00:00:00:00:0a', linkinfo: { info_kind: 'vxlan', info_data: { id: 7, port: 8472, local: '192.168.5.2' } } };
  const host = fakeHost({ link, routes: [] });
  const m = new RouteManager({ backend: 'vxlan', runner: host.runner, nodeName: 'a', nodeIP: '192.168.5.2', clusterCIDR: CLUSTER, vxlan: { vni: 1, port: 8472, device: DEV }, log: noopLogger });
  await m.sync([node('a', '192.168.5.2', '10.244.0.0/24')]);
  assert.equal(host.writes[0], `ip link delete ${DEV}`);
  assert.match(host.writes[1]!, /^ip link add nodelet\.1 type vxlan id 1 /);
  m.close();
});

test('manager: Node updates that route the same (heartbeats) cause no pass; a changed peer does; the periodic pass repairs', async () => {
  const host = fakeHost({ routes: [] });
  const m = new RouteManager({ backend: 'host-gw', runner: host.runner, nodeName: 'a', nodeIP: '192.168.5.2', clusterCIDR: CLUSTER, vxlan: { vni: 1, port: 8472, device: DEV }, log: noopLogger, resyncMs: 30 });
  const nodes = [node('a', '192.168.5.2', '10.244.0.0/24'), node('b', '192.168.5.3', '10.244.1.0/24')];
  m.update(nodes);
  await pollUntil('the first pass', () => m.passes === 1 && m.idle(), { timeoutMs: 5000, intervalMs: 5 });
  m.update([...nodes.map((n) => ({ ...n, status: { ...n.status, conditions: [{ type: 'Ready', status: 'True' as const }] } }))]);
  assert.equal(m.passes, 1);
  assert.ok(m.idle());
  m.update([...nodes, node('c', '192.168.5.4', '10.244.2.0/24')]);
  await pollUntil('a pass for the new peer', () => host.writes.includes('ip route replace 10.244.2.0/24 via 192.168.5.4 proto 150'), { timeoutMs: 5000, intervalMs: 5 });
  const passes = m.passes;
  await pollUntil('a periodic pass', () => m.passes > passes, { timeoutMs: 5000, intervalMs: 5 });
  m.close();
});
