// The servicelb controller against the real API server: pool assignment, release on delete and
// type change, classes left alone, assignments kept across a controller restart, node-IP mode,
// and the API server's side (nodePorts, healthCheckNodePort, loadBalancerIP refused).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NODES, SERVICES, statusOf, type Node, type Service } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startRealCluster, type RealCluster } from '../testing/real-cluster.js';
import { createNodes, fakeNode } from '../testing/fake-agents.js';
import { AddressPool, parsePool } from './pool.js';
import { EXCLUDE_LB_LABEL } from './controller.js';

const until = <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => pollUntil(what, fn, { timeoutMs: 10_000, intervalMs: 25 });

const lb = (name: string, spec: Partial<NonNullable<Service['spec']>> = {}): Service => ({
  metadata: { name, namespace: 'default' },
  spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ port: 80 }], ...spec },
});
const ingress = (s: Service): string[] => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '');

describe('AddressPool', () => {
  it('hands out the lowest free host address, keeps claims, frees on release', () => {
    const p = new AddressPool('192.168.50.0/30');
    assert.equal(p.size, 2);
    assert.equal(p.claim('b', '192.168.50.2'), true);
    assert.equal(p.claim('c', '192.168.50.2'), false, 'taken');
    assert.equal(p.claim('c', '192.168.50.3'), false, 'broadcast address is not in the pool');
    assert.equal(p.assign('a'), '192.168.50.1');
    assert.equal(p.assign('a'), '192.168.50.1', 'stable');
    assert.equal(p.assign('c'), undefined, 'full');
    p.release('b');
    assert.equal(p.assign('c'), '192.168.50.2');
    assert.equal(new AddressPool('10.0.0.7/32').assign('x'), '10.0.0.7');
  });

  it('refuses what is not an IPv4 network address', () => {
    assert.throws(() => parsePool('10.0.0.1/24'), /host bits set; give the network address \(10\.0\.0\.0\/24\)/);
    assert.throws(() => parsePool('nope'), /not an IPv4 CIDR/);
    assert.throws(() => parsePool('10.0.0.0/33'), /not an IPv4 CIDR/);
  });
});

describe('servicelb controller on the real API server', () => {
  let c: RealCluster;
  const POOL = '192.168.240.0/29';
  before(async () => {
    c = await startRealCluster();
  });
  after(async () => c.close());
  const svcs = { get: (n: string) => c.admin.resource(SERVICES, 'default').get(n), create: (s: Service) => c.admin.resource(SERVICES, 'default').create(s), update: (s: Service) => c.admin.resource(SERVICES, 'default').update(s), delete: (n: string) => c.admin.resource(SERVICES, 'default').delete(n) };
  const get = (name: string): Promise<Service> => svcs.get(name) as Promise<Service>;
  const put = (s: Service): Promise<unknown> => svcs.update(s);
  const waitIngress = (name: string, want: (ips: string[]) => boolean, what: string): Promise<Service> =>
    until(`${name}: ${what}`, async () => {
      const s = await get(name);
      return want(ingress(s)) ? s : undefined;
    });

  it('the API server gives a LoadBalancer nodePorts, and healthCheckNodePort with eTP Local; none with allocateLoadBalancerNodePorts false; loadBalancerIP is refused', async () => {
    const a = (await svcs.create(lb('np', { externalTrafficPolicy: 'Local' }))) as Service;
    assert.equal(a.spec?.allocateLoadBalancerNodePorts, true);
    assert.ok(a.spec?.ports?.[0]?.nodePort, 'a nodePort');
    assert.ok(a.spec?.healthCheckNodePort && a.spec.healthCheckNodePort !== a.spec.ports?.[0]?.nodePort, `healthCheckNodePort ${a.spec?.healthCheckNodePort}`);
    const b = (await svcs.create(lb('nonp', { allocateLoadBalancerNodePorts: false }))) as Service;
    assert.equal(b.spec?.ports?.[0]?.nodePort, undefined);
    assert.equal(b.spec?.healthCheckNodePort, undefined, 'eTP Cluster has no health check port');
    await assert.rejects(svcs.create(lb('ip', { loadBalancerIP: '192.168.240.3' })), (err: Error) => {
      assert.equal(statusOf(err)?.code, 422);
      assert.match(err.message, /spec\.loadBalancerIP: Forbidden: requesting a load balancer address is not supported/);
      return true;
    });
    await assert.rejects(svcs.create(lb('src', { loadBalancerSourceRanges: ['10.0.0.0/40'] })), /spec\.loadBalancerSourceRanges\[0\]/);
    await svcs.delete('np');
    await svcs.delete('nonp');
  });

  it('assigns pool addresses, frees them on delete and type change, leaves classed Services alone, keeps assignments across a restart', async () => {
    const h = await c.controllers(['servicelb'], { serviceLbPool: POOL });
    await svcs.create(lb('a'));
    await svcs.create(lb('b'));
    await svcs.create(lb('classed', { loadBalancerClass: 'example.com/other' }));
    await svcs.create({ metadata: { name: 'plain', namespace: 'default' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } });
    const a = await waitIngress('a', (ips) => ips.length === 1, 'an address');
    const b = await waitIngress('b', (ips) => ips.length === 1, 'an address');
    assert.notEqual(ingress(a)[0], ingress(b)[0]);
    for (const ip of [...ingress(a), ...ingress(b)]) assert.ok(new AddressPool(POOL).contains(ip), ip);
    assert.equal(a.status?.loadBalancer?.ingress?.[0]?.ipMode, 'VIP');

    // b becomes ClusterIP: its address goes from its status and back to the pool.
    const freed = ingress(b)[0]!;
    await put({ ...b, spec: { ...b.spec, type: 'ClusterIP', ports: [{ port: 80 }], allocateLoadBalancerNodePorts: undefined } });
    await waitIngress('b', (ips) => ips.length === 0, 'no address after the type change');
    await svcs.create(lb('d'));
    const d = await waitIngress('d', (ips) => ips.length === 1, 'an address');
    assert.equal(ingress(d)[0], freed, 'the freed address is the lowest free one');
    assert.deepEqual(ingress(await get('classed')), [], 'a Service of another class is not touched');
    assert.deepEqual(ingress(await get('plain')), []);

    // A new controller (a restart) re-claims from the statuses before assigning anything new.
    await h.close();
    await svcs.delete('a');
    await svcs.create(lb('e'));
    const h2 = await c.controllers(['servicelb'], { serviceLbPool: POOL });
    const e = await waitIngress('e', (ips) => ips.length === 1, 'an address after the restart');
    assert.equal(ingress(await get('d'))[0], freed, 'd kept its address');
    assert.notEqual(ingress(e)[0], freed, 'e did not get d’s address');
    await h2.close();
    for (const n of ['b', 'classed', 'plain', 'd', 'e']) await svcs.delete(n);
  });

  it('without a pool, a LoadBalancer gets the InternalIPs of the ready, not excluded nodes and follows them', async () => {
    await createNodes(c.admin, [fakeNode('n1'), fakeNode('n2'), fakeNode('n3', { metadata: { name: 'n3', labels: { [EXCLUDE_LB_LABEL]: '' } } })]);
    const nodes = c.admin.resource(NODES);
    for (const [n, ip] of [['n1', '192.168.90.1'], ['n2', '192.168.90.2'], ['n3', '192.168.90.3']] as const) {
      const cur = (await nodes.get(n)) as Node;
      await nodes.updateStatus({ ...cur, status: { ...cur.status, addresses: [{ type: 'InternalIP', address: ip }] } });
    }
    const h = await c.controllers(['servicelb']);
    await svcs.create(lb('nodes'));
    await waitIngress('nodes', (ips) => ips.join() === '192.168.90.1,192.168.90.2', 'both ready nodes');
    await nodes.delete('n2');
    await waitIngress('nodes', (ips) => ips.join() === '192.168.90.1', 'only n1 after n2 went');
    await h.close();
    await svcs.delete('nodes');
  });
});
