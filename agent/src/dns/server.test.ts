// The resolver on real loopback sockets (UDP and TCP) with a fake upstream: local answers,
// forwarding and caching, truncation, and input that must not hurt it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { noopLogger } from '@nodelet/base';
import type { EndpointSlice } from '@nodelet/api';
import { ResponseCache } from './cache.js';
import { ClusterIndex } from './cluster-index.js';
import { Forwarder } from './forwarder.js';
import { DnsHandler } from './handler.js';
import { DnsMetrics } from './metrics.js';
import { DnsServer } from './server.js';
import { ask, sendRaw, startFakeUpstream, type FakeUpstream } from './testing/dns-client.js';

describe('DNS server', () => {
  let upstream: FakeUpstream;
  let server: DnsServer;
  let addr: { ip: string; port: number };
  const registry = new Registry();
  const index = new ClusterIndex();
  const upstreams = [{ ip: '127.0.0.1', port: 0 }];

  before(async () => {
    upstream = await startFakeUpstream({
      'www.example.org A': [{ type: 'A', name: 'www.example.org', ttl: 120, class: 'IN', data: '192.0.2.80' }],
      '80.2.0.192.in-addr.arpa PTR': [{ type: 'PTR', name: '80.2.0.192.in-addr.arpa', ttl: 120, class: 'IN', data: 'www.example.org' }],
    });
    upstreams[0] = upstream.address;
    index.upsertNamespace({ metadata: { name: 'default' } });
    index.upsertService({ metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] } });
    index.upsertService({ metadata: { name: 'many', namespace: 'default' }, spec: { clusterIP: 'None' } });
    const slice: EndpointSlice = {
      metadata: { name: 'many-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'many' } },
      addressType: 'IPv4',
      endpoints: Array.from({ length: 40 }, (_, i) => ({ addresses: [`10.244.${Math.floor(i / 200)}.${(i % 200) + 10}`], conditions: { ready: true } })),
    };
    index.upsertSlice(slice);
    index.upsertService({ metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'www.example.org' } });
    const cache = new ResponseCache();
    let label = '';
    const metrics = new DnsMetrics(registry, () => cache.counts(), () => label);
    const forwarder = new Forwarder({ upstreams: () => upstreams, attemptTimeoutMs: 300, deadlineMs: 1000 });
    const handler = new DnsHandler({ view: index, zone: { zone: 'cluster.local', ttl: 30, negativeTTL: 5, podRecords: 'insecure', nameservers: ['10.96.0.10'] }, forwarder, cache, metrics, server: () => label, log: noopLogger });
    server = await DnsServer.listen({ host: '127.0.0.1', port: 0, handler: (m, p, f, s) => handler.handle(m, p, f, s), log: noopLogger });
    addr = server.address;
    label = `dns://127.0.0.1:${addr.port}`;
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  it('answers cluster names over UDP and TCP, authoritatively, without asking upstream', async () => {
    for (const tcp of [false, true]) {
      const r = await ask(addr, 'web.default.svc.cluster.local', 'A', { tcp });
      assert.equal(r.rcode, 'NOERROR');
      assert.equal(r.flag_aa, true);
      assert.equal(r.flag_ra, true);
      assert.deepEqual(r.answers!.map((a) => 'data' in a && a.data), ['10.96.0.20']);
    }
    const nx = await ask(addr, 'www.example.org.default.svc.cluster.local', 'A');
    assert.equal(nx.rcode, 'NXDOMAIN');
    assert.equal(nx.authorities![0]!.type, 'SOA');
    assert.deepEqual(upstream.asked, [], 'cluster-domain names are never forwarded');
  });

  it('forwards other names upstream and serves repeats from the cache', async () => {
    const first = await ask(addr, 'www.example.org', 'A');
    assert.deepEqual(first.answers!.map((a) => 'data' in a && a.data), ['192.0.2.80']);
    assert.equal(first.flag_aa, false);
    const second = await ask(addr, 'WWW.example.org', 'A', { id: 99 });
    assert.equal(second.id, 99);
    assert.deepEqual(second.answers!.map((a) => 'data' in a && a.data), ['192.0.2.80']);
    assert.ok(second.answers!.every((a) => 'ttl' in a && a.ttl! <= 30), 'cached at most 30 s');
    assert.deepEqual(upstream.asked.filter((q) => q.startsWith('www.example.org A')), ['www.example.org A udp']);
    const nx = await ask(addr, 'nothing.example.org', 'A', { tcp: true });
    assert.equal(nx.rcode, 'NXDOMAIN');
    assert.ok(upstream.asked.includes('nothing.example.org A tcp'), 'a TCP client is forwarded over TCP');
  });

  it('PTRs of addresses that are not the cluster go upstream', async () => {
    const r = await ask(addr, '80.2.0.192.in-addr.arpa', 'PTR');
    assert.deepEqual(r.answers!.map((a) => 'data' in a && a.data), ['www.example.org']);
    const local = await ask(addr, '20.0.96.10.in-addr.arpa', 'PTR');
    assert.deepEqual(local.answers!.map((a) => 'data' in a && a.data), ['web.default.svc.cluster.local']);
    assert.equal(local.flag_aa, true);
  });

  it('an ExternalName A answers the CNAME and the target records found upstream', async () => {
    const r = await ask(addr, 'ext.default.svc.cluster.local', 'A');
    assert.deepEqual(r.answers!.map((a) => `${a.type} ${'data' in a ? String(a.data) : ''}`), ['CNAME www.example.org', 'A 192.0.2.80']);
  });

  it('sets TC on a UDP answer over 512 bytes (or the EDNS size) and gives all of it over TCP', async () => {
    const udp = await ask(addr, 'many.default.svc.cluster.local', 'A');
    assert.equal(udp.flag_tc, true);
    assert.ok(udp.size <= 512);
    const big = await ask(addr, 'many.default.svc.cluster.local', 'A', { edns: 4096 });
    assert.equal(big.flag_tc, false, 'fits the EDNS size');
    assert.equal(big.answers!.length, 40);
    const tcp = await ask(addr, 'many.default.svc.cluster.local', 'A', { tcp: true });
    assert.equal(tcp.flag_tc, false);
    assert.equal(tcp.answers!.length, 40);
  });

  it('malformed input gets FORMERR or nothing and the server keeps answering', async () => {
    const junk = [Buffer.alloc(0), Buffer.from([1]), Buffer.alloc(12), Buffer.from('0123456789abcdefghij'), Buffer.concat([Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])])];
    for (const j of junk) {
      const reply = await sendRaw(addr, j, { timeoutMs: 300 });
      if (reply) assert.equal(reply.readUInt16BE(2) & 0xf, 1, 'FORMERR');
    }
    // TCP: a frame of garbage, then a frame whose length lies, then a half-written frame.
    for (const bytes of [Buffer.from([0, 3, 1, 2, 3]), Buffer.from([0xff, 0xff, 1, 2]), Buffer.from([0])]) {
      await new Promise<void>((resolve) => {
        const s = connect({ host: addr.ip, port: addr.port }, () => s.end(bytes));
        s.on('error', () => resolve());
        s.on('close', () => resolve());
        s.resume();
      });
    }
    const r = await ask(addr, 'web.default.svc.cluster.local', 'A');
    assert.equal(r.rcode, 'NOERROR');
    assert.match(await registry.metrics(), /nodelet_dns_malformed_requests_total\{server="dns:\/\/127\.0\.0\.1:\d+",proto="udp"\} [1-9]/);
  });

  it('answers SERVFAIL when no upstream answers, in bounded time', async () => {
    const saved = upstreams[0]!;
    upstreams[0] = { ip: '127.0.0.1', port: 9 };
    try {
      const started = Date.now();
      const r = await ask(addr, 'down.example.net', 'A');
      assert.equal(r.rcode, 'SERVFAIL');
      assert.ok(Date.now() - started < 2500);
    } finally {
      upstreams[0] = saved;
    }
  });

  it("publishes CoreDNS's metric names", async () => {
    const text = await registry.metrics();
    for (const name of ['coredns_dns_requests_total', 'coredns_dns_responses_total', 'coredns_dns_request_duration_seconds_bucket', 'coredns_cache_hits_total', 'coredns_cache_misses_total', 'coredns_cache_entries']) {
      assert.ok(text.includes(name), name);
    }
    assert.match(text, /coredns_dns_responses_total\{server="[^"]+",zone="cluster\.local\.",rcode="NXDOMAIN"\} [1-9]/);
  });
});
