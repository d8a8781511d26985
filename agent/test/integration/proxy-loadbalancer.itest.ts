/**
 * LoadBalancer addresses and externalIPs through the real service proxy, in network namespaces
 * this file creates (proxy-netns.ts): the client is the "external host" namespace, routing the
 * pool 192.168.240.0/24 to the node namespace. A request goes to a load-balancer address only
 * once the live table holds it and the address is on the node (`waitForLb`), so no packet leaves
 * for an address no local rule holds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Registry } from 'prom-client';
import { pollUntil } from '@nodelet/base';
import { ApiClient, NODES, SERVICES, type Node, type Service } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { ServiceProxy } from '../../src/proxy/proxier.js';
import { resolveProxyConfig } from '../../src/proxy/config.js';
import { Nft, mapKeys } from '../../src/proxy/nft.js';
import { commandRunner } from '../../src/proxy/exec.js';
import { service, slice } from '../../src/proxy/testing/fixtures.js';
import { ENDPOINTSLICES } from '@nodelet/api';
import { NetnsNode, type HttpResult } from './proxy-netns.js';

const enabled = process.env.AGENT_IT === '1' && process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0 && spawnSync('conntrack', ['--version']).status === 0;
const skip = enabled ? false : 'needs AGENT_IT=1, root, nft and conntrack (Debian nftables, conntrack)';

const LB_IP = '192.168.240.1';
const EXT_IP = '192.168.241.7';
let net: NetnsNode;
let server: InMemoryApiServer;
let api: ApiClient;
let proxy: ServiceProxy;
let nft: Nft;
const pods: Array<{ ns: string; ip: string }> = [];
const quietLog = { error() {}, warn() {}, info() {}, debug() {}, child: () => quietLog };

before(async () => {
  if (skip) return;
  net = new NetnsNode();
  net.setup();
  for (let i = 1; i <= 2; i++) pods.push(net.addPod(i));
  for (let i = 0; i < 2; i++) await net.serve(pods[i]!.ns, `p${i + 1}`, { tcp: 8080 });
  // The external host reaches the pool and the external IP through the node, as a LAN router would send them.
  for (const dst of ['192.168.240.0/24', `${EXT_IP}/32`]) spawnSync('ip', ['netns', 'exec', net.ext, 'ip', 'route', 'add', dst, 'via', net.nodeIP]);
  server = await InMemoryApiServer.start();
  api = server.client();
  await api.resource(NODES).create({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: net.nodeIP }] } } as Node);
  nft = new Nft(commandRunner(net.node));
  proxy = await ServiceProxy.start({ api, nodeName: 'n1', config: resolveProxyConfig({}), log: quietLog, registry: new Registry(), netns: net.node, healthCheckBindAddress: '127.0.0.1' });
  await proxy.synced;
}, { timeout: 60_000 });

after(async () => {
  if (skip) return;
  try {
    await proxy?.close();
    api?.close();
    await server?.close();
  } finally {
    await net?.destroy(); // the namespaces, and with them nodelet-lb0 and the table, go even when a close fails
  }
});

const lbAddrs = (): string[] => {
  const out = net.inNode(['ip', '-json', 'addr', 'show', 'dev', 'nodelet-lb0'], true);
  return out ? (JSON.parse(out) as Array<{ addr_info: Array<{ family: string; local: string }> }>).flatMap((l) => l.addr_info.filter((a) => a.family === 'inet').map((a) => a.local)) : [];
};
const liveMap = async (map: string): Promise<string[]> => mapKeys(await nft.listJson('nodelet-proxy', AbortSignal.timeout(5000)), map);

/** Waits until the table sends `ip`:80 on and, for a load-balancer address, the node holds it. */
async function waitForLb(ip: string, onNode: boolean): Promise<void> {
  await pollUntil(`${ip}:80 in the live table${onNode ? ' and on nodelet-lb0' : ''}`, async () => (await liveMap('service-ips')).includes(`${ip} . tcp . 80`) && (!onNode || lbAddrs().includes(ip)), { timeoutMs: 10_000, intervalMs: 50 });
}

async function putLb(spec: Partial<NonNullable<Service['spec']>>): Promise<void> {
  const svcs = api.resource(SERVICES, 'default');
  const want = service('web', '10.96.0.50', { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30090 }], ...spec });
  const cur = await svcs.get('web').catch(() => undefined);
  const saved = cur ? await svcs.update({ ...want, metadata: { ...want.metadata, resourceVersion: cur.metadata.resourceVersion } }) : await svcs.create(want);
  // What the servicelb controller writes.
  await svcs.updateStatus({ ...saved, status: { loadBalancer: { ingress: [{ ip: LB_IP, ipMode: 'VIP' }] } } });
}

const names = (rs: HttpResult[]): string[] => rs.map((r) => (r.ok ? r.body!.split(' ')[0]! : `error:${r.code}`));

test('a LoadBalancer address answers from outside once the proxy holds it; eTP Local keeps the client address; source ranges filter; deletion takes the address off the node', { skip, timeout: 120_000 }, async () => {
  assert.deepEqual(lbAddrs(), [], 'nothing on the node before a LoadBalancer exists');
  await api.resource(ENDPOINTSLICES, 'default').create(slice('web', [{ ip: pods[0]!.ip, node: 'n1' }, { ip: pods[1]!.ip, node: 'n1' }]));
  await putLb({ externalIPs: [EXT_IP] });
  await waitForLb(LB_IP, true);
  const rs = await net.http(net.ext, `http://${LB_IP}/`, 20);
  assert.deepEqual(new Set(names(rs)), new Set(['p1', 'p2']), 'both endpoints answer the LB address');
  // Masqueraded to the node's address on the pods' bridge, not the client's.
  assert.ok(rs.every((r) => r.body!.endsWith(' 10.244.0.1')), `eTP Cluster masquerades: ${rs.map((r) => r.body).join(',')}`);
  await waitForLb(EXT_IP, false);
  assert.deepEqual(lbAddrs(), [LB_IP], 'an externalIP is answered but not put on the node');
  assert.deepEqual(new Set(names(await net.http(net.ext, `http://${EXT_IP}/`, 10))), new Set(['p1', 'p2']));

  await putLb({ externalTrafficPolicy: 'Local' });
  await pollUntil('the external chain without masquerade', async () => !(await nft.listText('nodelet-proxy', AbortSignal.timeout(5000))).match(/chain "?external-[^\n]*\n[^\n]*mark-for-masquerade/), { timeoutMs: 10_000, intervalMs: 50 });
  const [local] = await net.http(net.ext, `http://${LB_IP}/`);
  assert.equal(local!.body!.split(' ')[1], net.extIP, 'eTP Local: the pod sees the client address');

  await putLb({ loadBalancerSourceRanges: ['10.1.0.0/16'] });
  await pollUntil('the firewall element', async () => (await liveMap('firewall-ips')).includes(`${LB_IP} . tcp . 80`), { timeoutMs: 10_000, intervalMs: 50 });
  const [blocked] = await net.client<HttpResult[]>(net.ext, ['http', '--url', `http://${LB_IP}/`, '--timeout', '1000']);
  assert.equal(blocked!.ok, false, 'a source outside the ranges is dropped');
  assert.equal(blocked!.code, 'ETIMEDOUT');
  await putLb({ loadBalancerSourceRanges: ['192.168.77.0/24'] });
  await pollUntil('the new range live', async () => (await nft.listText('nodelet-proxy', AbortSignal.timeout(5000))).includes('192.168.77.0/24'), { timeoutMs: 10_000, intervalMs: 50 });
  const [allowed] = await net.http(net.ext, `http://${LB_IP}/`);
  assert.equal(allowed!.ok, true, `a source inside the ranges passes: ${allowed!.code}`);

  await api.resource(SERVICES, 'default').delete('web');
  await pollUntil('the address off the node and out of the table', async () => lbAddrs().length === 0 && !(await liveMap('service-ips')).includes(`${LB_IP} . tcp . 80`), { timeoutMs: 10_000, intervalMs: 50 });
});
