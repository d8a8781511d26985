// The cluster zone's records against Service/EndpointSlice/Namespace/Pod objects (CoreDNS kubernetes-plugin rules).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Answer } from 'dns-packet';
import type { EndpointSlice, Pod, Service } from '@nodelet/api';
import { ClusterIndex } from './cluster-index.js';
import { answerReverseQuestion, answerZoneQuestion, type LocalAnswer, type ZoneOptions } from './records.js';

const ZONE: ZoneOptions = { zone: 'cluster.local', ttl: 30, negativeTTL: 5, podRecords: 'insecure', nameservers: ['10.96.0.10'] };

function svc(name: string, spec: Service['spec'], ns = 'default'): Service {
  return { metadata: { name, namespace: ns }, spec };
}

function slice(service: string, endpoints: Array<{ ip: string; ready?: boolean; hostname?: string }>, ports: EndpointSlice['ports'] = [], ns = 'default', name = `${service}-abc`): EndpointSlice {
  return {
    metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: e.ready === undefined ? {} : { ready: e.ready }, ...(e.hostname ? { hostname: e.hostname } : {}) })),
    ports,
  };
}

function cluster(o: { synced?: boolean } = {}): ClusterIndex {
  const ix = new ClusterIndex({ now: () => 1_700_000_000_000, synced: () => o.synced ?? true });
  for (const ns of ['default', 'team']) ix.upsertNamespace({ metadata: { name: ns } });
  ix.upsertService(svc('web', { clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'dns', port: 53, protocol: 'UDP' }], selector: { app: 'web' } }));
  ix.upsertSlice(slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.2.6' }], [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 5353, protocol: 'UDP' }]));
  ix.upsertService(svc('db', { clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }], selector: { app: 'db' } }));
  ix.upsertSlice(slice('db', [{ ip: '10.244.1.7', hostname: 'db-0' }, { ip: '10.244.2.8', hostname: 'db-1' }, { ip: '10.244.3.9', ready: false }, { ip: '10.244.3.10' }], [{ name: 'pg', port: 5432, protocol: 'TCP' }]));
  ix.upsertService(svc('empty', { clusterIP: 'None', clusterIPs: ['None'], selector: { app: 'none' } }));
  ix.upsertService(svc('unnamed', { clusterIP: '10.96.0.21', clusterIPs: ['10.96.0.21'], ports: [{ port: 81, protocol: 'TCP' }] }));
  ix.upsertService(svc('ext', { type: 'ExternalName', externalName: 'www.example.org.' }));
  ix.upsertService(svc('alias', { type: 'ExternalName', externalName: 'web.default.svc.cluster.local' }, 'team'));
  return ix;
}

const ask = (ix: ClusterIndex, name: string, type: string, o: ZoneOptions = ZONE): LocalAnswer => answerZoneQuestion(ix, name, name.toLowerCase().replace(/\.$/, ''), type, o);
const data = (rs: Answer[]): unknown[] => rs.map((r) => ('data' in r ? r.data : undefined)).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

function assertNegative(a: LocalAnswer, rcode: 'NXDOMAIN' | 'NOERROR'): void {
  assert.equal(a.rcode, rcode);
  assert.deepEqual(a.answers, []);
  assert.equal(a.authorities.length, 1);
  const soa = a.authorities[0]!;
  assert.equal(soa.type, 'SOA');
  assert.equal(soa.name, 'cluster.local');
  assert.equal(soa.type === 'SOA' && soa.ttl, 5, 'negative answers carry TTL 5');
  assert.deepEqual(soa.type === 'SOA' && { ...soa.data, serial: 0 }, { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', serial: 0, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 });
}

describe('cluster zone records', () => {
  it('A of a ClusterIP Service is its cluster IP with TTL 30; AAAA of it is NODATA', () => {
    const ix = cluster();
    const a = ask(ix, 'web.default.svc.cluster.local', 'A');
    assert.equal(a.rcode, 'NOERROR');
    assert.deepEqual(a.answers, [{ type: 'A', name: 'web.default.svc.cluster.local', ttl: 30, class: 'IN', data: '10.96.0.20' }]);
    assertNegative(ask(ix, 'web.default.svc.cluster.local', 'AAAA'), 'NOERROR');
  });

  it('echoes the name as asked and matches it case-insensitively', () => {
    const a = answerZoneQuestion(cluster(), 'WEB.Default.SVC.Cluster.Local', 'web.default.svc.cluster.local', 'A', ZONE);
    assert.equal(a.answers[0]!.name, 'WEB.Default.SVC.Cluster.Local');
  });

  it('names that do not exist are NXDOMAIN with the SOA; names that exist without records are NODATA', () => {
    const ix = cluster();
    assertNegative(ask(ix, 'nope.default.svc.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'web.nope.svc.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'nope.svc.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'foo.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'a.b.c.web.default.svc.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'default.svc.cluster.local', 'A'), 'NOERROR');
    assertNegative(ask(ix, 'svc.cluster.local', 'A'), 'NOERROR');
    assertNegative(ask(ix, 'cluster.local', 'A'), 'NOERROR');
    assertNegative(ask(ix, 'web.default.svc.cluster.local', 'MX'), 'NOERROR');
  });

  it('before the informers have listed, a name not found is SERVFAIL (not a cacheable NXDOMAIN)', () => {
    const ix = cluster({ synced: false });
    assert.equal(ask(ix, 'nope.default.svc.cluster.local', 'A').rcode, 'SERVFAIL');
    assert.equal(ask(ix, 'web.default.svc.cluster.local', 'A').rcode, 'NOERROR');
  });

  it('a headless Service has one A per ready endpoint; none ready is NXDOMAIN', () => {
    const ix = cluster();
    const a = ask(ix, 'db.default.svc.cluster.local', 'A');
    assert.deepEqual(data(a.answers), ['10.244.1.7', '10.244.2.8', '10.244.3.10']);
    assert.ok(a.answers.every((r) => r.type === 'A' && r.ttl === 30));
    assertNegative(ask(ix, 'empty.default.svc.cluster.local', 'A'), 'NXDOMAIN');
    ix.upsertSlice(slice('db', [{ ip: '10.244.3.9', ready: false }], [{ name: 'pg', port: 5432, protocol: 'TCP' }]));
    assertNegative(ask(ix, 'db.default.svc.cluster.local', 'A'), 'NXDOMAIN');
  });

  it('an endpoint is named by its hostname, else by its IP with dashes, for headless and ClusterIP Services', () => {
    const ix = cluster();
    assert.deepEqual(data(ask(ix, 'db-1.db.default.svc.cluster.local', 'A').answers), ['10.244.2.8']);
    assert.deepEqual(data(ask(ix, '10-244-3-10.db.default.svc.cluster.local', 'A').answers), ['10.244.3.10']);
    assert.deepEqual(data(ask(ix, '10-244-1-5.web.default.svc.cluster.local', 'A').answers), ['10.244.1.5']);
    assertNegative(ask(ix, 'db-9.db.default.svc.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, '10-244-3-9.db.default.svc.cluster.local', 'A'), 'NXDOMAIN');
  });

  it('SRV of a named port of a ClusterIP Service targets the Service name, with its A in the additional section', () => {
    const ix = cluster();
    const a = ask(ix, '_http._tcp.web.default.svc.cluster.local', 'SRV');
    assert.deepEqual(a.answers, [{ type: 'SRV', name: '_http._tcp.web.default.svc.cluster.local', ttl: 30, class: 'IN', data: { priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' } }]);
    assert.deepEqual(a.additionals, [{ type: 'A', name: 'web.default.svc.cluster.local', ttl: 30, class: 'IN', data: '10.96.0.20' }]);
    const udp = ask(ix, '_dns._udp.web.default.svc.cluster.local', 'SRV');
    assert.equal(udp.answers[0]!.type === 'SRV' && udp.answers[0]!.data.port, 53);
    assertNegative(ask(ix, '_http._udp.web.default.svc.cluster.local', 'SRV'), 'NXDOMAIN');
    assertNegative(ask(ix, '_http._tcp.unnamed.default.svc.cluster.local', 'SRV'), 'NXDOMAIN');
    // Without port and protocol every port is listed; both weigh 50.
    const all = ask(ix, 'web.default.svc.cluster.local', 'SRV');
    assert.deepEqual(data(all.answers), [
      { priority: 0, weight: 50, port: 53, target: 'web.default.svc.cluster.local' },
      { priority: 0, weight: 50, port: 80, target: 'web.default.svc.cluster.local' },
    ]);
  });

  it('SRV of a headless Service lists each endpoint by name and port, with the targets A records', () => {
    const ix = cluster();
    const a = ask(ix, '_pg._tcp.db.default.svc.cluster.local', 'SRV');
    assert.deepEqual(data(a.answers), [
      { priority: 0, weight: 33, port: 5432, target: '10-244-3-10.db.default.svc.cluster.local' },
      { priority: 0, weight: 33, port: 5432, target: 'db-0.db.default.svc.cluster.local' },
      { priority: 0, weight: 33, port: 5432, target: 'db-1.db.default.svc.cluster.local' },
    ]);
    assert.deepEqual(a.additionals.map((r) => `${r.name} ${'data' in r ? String(r.data) : ''}`).sort(), [
      '10-244-3-10.db.default.svc.cluster.local 10.244.3.10',
      'db-0.db.default.svc.cluster.local 10.244.1.7',
      'db-1.db.default.svc.cluster.local 10.244.2.8',
    ]);
  });

  it('ExternalName is a CNAME; A chases the target (upstream outside the zone, here inside it); never SRV', () => {
    const ix = cluster();
    const c = ask(ix, 'ext.default.svc.cluster.local', 'CNAME');
    assert.deepEqual(c.answers, [{ type: 'CNAME', name: 'ext.default.svc.cluster.local', ttl: 30, class: 'IN', data: 'www.example.org' }]);
    const a = ask(ix, 'ext.default.svc.cluster.local', 'A');
    assert.deepEqual(a.chase, { cname: c.answers[0], target: 'www.example.org', type: 'A' });
    assert.equal(a.rcode, 'NOERROR');
    const inZone = ask(ix, 'alias.team.svc.cluster.local', 'A');
    assert.deepEqual(inZone.answers, [
      { type: 'CNAME', name: 'alias.team.svc.cluster.local', ttl: 30, class: 'IN', data: 'web.default.svc.cluster.local' },
      { type: 'A', name: 'web.default.svc.cluster.local', ttl: 30, class: 'IN', data: '10.96.0.20' },
    ]);
    assertNegative(ask(ix, 'ext.default.svc.cluster.local', 'SRV'), 'NOERROR');
    assertNegative(ask(ix, 'x.ext.default.svc.cluster.local', 'A'), 'NXDOMAIN');
  });

  it('pod names: insecure answers any IP in an existing namespace; verified needs the pod; disabled answers none', () => {
    const ix = cluster();
    assert.deepEqual(ask(ix, '10-244-1-5.default.pod.cluster.local', 'A').answers, [{ type: 'A', name: '10-244-1-5.default.pod.cluster.local', ttl: 30, class: 'IN', data: '10.244.1.5' }]);
    assertNegative(ask(ix, '10-244-1-5.default.pod.cluster.local', 'AAAA'), 'NOERROR');
    assertNegative(ask(ix, '10-244-1-5.nope.pod.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'not-an-ip.default.pod.cluster.local', 'A'), 'NXDOMAIN');
    assertNegative(ask(ix, 'default.pod.cluster.local', 'A'), 'NOERROR');
    const verified = { ...ZONE, podRecords: 'verified' as const };
    assertNegative(ask(ix, '10-244-1-5.default.pod.cluster.local', 'A', verified), 'NXDOMAIN');
    const pod: Pod = { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [] }, status: { podIP: '10.244.1.5', podIPs: [{ ip: '10.244.1.5' }] } };
    ix.upsertPod(pod);
    assert.equal(ask(ix, '10-244-1-5.default.pod.cluster.local', 'A', verified).answers.length, 1);
    assertNegative(ask(ix, '10-244-1-5.team.pod.cluster.local', 'A', verified), 'NXDOMAIN');
    ix.deletePod(pod);
    assertNegative(ask(ix, '10-244-1-5.default.pod.cluster.local', 'A', verified), 'NXDOMAIN');
    assertNegative(ask(ix, '10-244-1-5.default.pod.cluster.local', 'A', { ...ZONE, podRecords: 'disabled' }), 'NXDOMAIN');
  });

  it('the apex has a SOA and NS ns.dns.<zone> (with the kube-dns address); dns-version TXT is 1.1.0', () => {
    const ix = cluster();
    const soa = ask(ix, 'cluster.local', 'SOA');
    assert.equal(soa.rcode, 'NOERROR');
    assert.equal(soa.answers[0]!.type, 'SOA');
    assert.equal(soa.answers[0]!.type === 'SOA' && soa.answers[0]!.data.serial, 1_700_000_000);
    const ns = ask(ix, 'cluster.local', 'NS');
    assert.deepEqual(data(ns.answers), ['ns.dns.cluster.local']);
    assert.deepEqual(data(ns.additionals), ['10.96.0.10']);
    assert.deepEqual(data(ask(ix, 'ns.dns.cluster.local', 'A').answers), ['10.96.0.10']);
    const txt = ask(ix, 'dns-version.cluster.local', 'TXT');
    assert.deepEqual(txt.answers, [{ type: 'TXT', name: 'dns-version.cluster.local', ttl: 28800, class: 'IN', data: '1.1.0' }]);
  });

  it('a deleted Service and its slices disappear from the answers and the PTRs', () => {
    const ix = cluster();
    ix.deleteService(svc('web', {}));
    assertNegative(ask(ix, 'web.default.svc.cluster.local', 'A'), 'NXDOMAIN');
    assert.equal(answerReverseQuestion(ix, 'x', '20.0.96.10.in-addr.arpa', 'PTR', ZONE), undefined);
    ix.deleteSlice(slice('web', []));
    assert.equal(answerReverseQuestion(ix, 'x', '5.1.244.10.in-addr.arpa', 'PTR', ZONE), undefined);
  });
});

describe('reverse records', () => {
  const ptr = (ix: ClusterIndex, name: string, type = 'PTR'): LocalAnswer | undefined => answerReverseQuestion(ix, name, name, type, ZONE);

  it('PTR of a cluster IP names the Service; of an endpoint IP the endpoint', () => {
    const ix = cluster();
    assert.deepEqual(ptr(ix, '20.0.96.10.in-addr.arpa')!.answers, [{ type: 'PTR', name: '20.0.96.10.in-addr.arpa', ttl: 30, class: 'IN', data: 'web.default.svc.cluster.local' }]);
    assert.deepEqual(data(ptr(ix, '7.1.244.10.in-addr.arpa')!.answers), ['db-0.db.default.svc.cluster.local']);
    assert.deepEqual(data(ptr(ix, '10.3.244.10.in-addr.arpa')!.answers), ['10-244-3-10.db.default.svc.cluster.local']);
  });

  it('anything else under in-addr.arpa is not answered here (it falls through to the upstreams)', () => {
    const ix = cluster();
    assert.equal(ptr(ix, '99.0.96.10.in-addr.arpa'), undefined);
    assert.equal(ptr(ix, '9.3.244.10.in-addr.arpa'), undefined, 'a not-ready endpoint has no PTR');
    assert.equal(ptr(ix, '0.96.10.in-addr.arpa'), undefined);
    assert.equal(ptr(ix, '20.0.96.10.in-addr.arpa', 'A'), undefined);
  });

  it('IPv6 cluster IPs have ip6.arpa PTRs', () => {
    const ix = cluster();
    ix.upsertService(svc('v6', { clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'], ports: [{ port: 80 }] }));
    const name = 'a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa';
    assert.deepEqual(data(ptr(ix, name)!.answers), ['v6.default.svc.cluster.local']);
    assert.deepEqual(data(ask(ix, 'v6.default.svc.cluster.local', 'AAAA').answers), ['fd00:10:96::a']);
  });
});
