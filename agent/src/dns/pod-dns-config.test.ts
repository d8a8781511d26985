// The pod sandbox's DNSConfig per dnsPolicy, by the kubelet's rules (pkg/kubelet/network/dns).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod, PodSpec } from '@nodelet/api';
import { PodDnsConfigurer, podDnsConfig, type PodDnsSettings } from './pod-dns-config.js';
import type { ResolvConf } from './resolv-conf.js';

const HOST: ResolvConf = { nameservers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'example'], options: ['timeout:2', 'attempts:3'] };
const S: PodDnsSettings = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf', nodeIPs: ['192.0.2.2'] };
const CLUSTER_SEARCH = ['team.svc.cluster.local', 'svc.cluster.local', 'cluster.local'];

const pod = (spec: Partial<PodSpec> = {}): Pod => ({ metadata: { name: 'p', namespace: 'team', uid: 'u1' }, spec: { containers: [], ...spec } });

describe('pod DNS config', () => {
  it('ClusterFirst: the cluster DNS, the cluster searches before the node searches, ndots:5', () => {
    const r = podDnsConfig(pod({ dnsPolicy: 'ClusterFirst' }), HOST, S);
    assert.deepEqual(r.config, { servers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'corp.example', 'example'], options: ['ndots:5'] });
    assert.deepEqual(r.warnings, []);
  });

  it('an unset dnsPolicy is ClusterFirst (static pods are not defaulted by an API server)', () => {
    assert.deepEqual(podDnsConfig(pod(), HOST, S).config, podDnsConfig(pod({ dnsPolicy: 'ClusterFirst' }), HOST, S).config);
  });

  it('ClusterFirst on the host network falls back to Default, as the kubelet does; ClusterFirstWithHostNet does not', () => {
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'ClusterFirst', hostNetwork: true }), HOST, S).config, { servers: HOST.nameservers, searches: HOST.searches, options: HOST.options });
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }), HOST, S).config.servers, ['10.96.0.10']);
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'ClusterFirstWithHostNet' }), HOST, S).config.searches, [...CLUSTER_SEARCH, 'corp.example', 'example']);
  });

  it("Default: the node's resolv.conf as it is", () => {
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), HOST, S).config, { servers: HOST.nameservers, searches: HOST.searches, options: HOST.options });
  });

  it("Default without a resolv.conf (resolvConf: ''): the node's own loopback and search '.'", () => {
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), undefined, { ...S, resolvConf: '' }).config, { servers: ['127.0.0.1'], searches: ['.'], options: [] });
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), undefined, { ...S, resolvConf: '', nodeIPs: ['fd00::2'] }).config.servers, ['::1']);
  });

  it('None: only the pod dnsConfig', () => {
    const r = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }), HOST, S);
    assert.deepEqual(r.config, { servers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:2', 'edns0'] });
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'None' }), HOST, S).config, { servers: [], searches: [], options: [] });
  });

  it('dnsConfig merges: nameservers and searches appended without duplicates, options override by name', () => {
    const r = podDnsConfig(pod({ dnsPolicy: 'ClusterFirst', dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1'], searches: ['example', 'extra.example'], options: [{ name: 'ndots', value: '2' }, { name: 'single-request-reopen' }] } }), HOST, S);
    assert.deepEqual(r.config, {
      servers: ['10.96.0.10', '1.1.1.1'],
      searches: [...CLUSTER_SEARCH, 'corp.example', 'example', 'extra.example'],
      options: ['ndots:2', 'single-request-reopen'],
    });
    const d = podDnsConfig(pod({ dnsPolicy: 'Default', dnsConfig: { options: [{ name: 'timeout', value: '5' }] } }), HOST, S);
    assert.deepEqual(d.config.options, ['timeout:5', 'attempts:3']);
  });

  it('at most 3 nameservers, with a DNSConfigForming warning naming the applied line', () => {
    const r = podDnsConfig(pod({ dnsPolicy: 'Default', dnsConfig: { nameservers: ['1.1.1.1', '8.8.8.8'] } }), HOST, S);
    assert.deepEqual(r.config.servers, ['192.0.2.53', '192.0.2.54', '1.1.1.1']);
    assert.deepEqual(r.warnings, [{ reason: 'DNSConfigForming', message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.0.2.53 192.0.2.54 1.1.1.1' }]);
  });

  it('searches: at most 32, none over 253 characters, at most 2048 characters in all', () => {
    const many = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    const r = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { searches: many } }), HOST, S);
    assert.deepEqual(r.config.searches, many.slice(0, 32));
    assert.equal(r.warnings[0]!.reason, 'DNSConfigForming');
    assert.match(r.warnings[0]!.message, /^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: d0\.example d1\.example/);
    const long = `${'a'.repeat(250)}.com`;
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { searches: ['ok.example', long] } }), HOST, S).config.searches, ['ok.example']);
    const wide = Array.from({ length: 10 }, (_, i) => `${String(i).repeat(200)}.example`);
    const w = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { searches: wide } }), HOST, S);
    assert.ok(w.config.searches.join(' ').length <= 2048);
    assert.deepEqual(w.config.searches, wide.slice(0, 9));
  });

  it('ClusterFirst without clusterDNS falls back to Default with a MissingClusterDNS warning', () => {
    const r = podDnsConfig(pod({ dnsPolicy: 'ClusterFirst' }), HOST, { ...S, clusterDNS: [] });
    assert.deepEqual(r.config.servers, HOST.nameservers);
    assert.equal(r.warnings[0]!.reason, 'MissingClusterDNS');
    assert.match(r.warnings[0]!.message, /cannot create Pod using "ClusterFirst" policy\. Falling back to "Default" policy\./);
  });

  it('the configurer reads the resolv.conf for each pod and reports cuts as Warning events; an unreadable file fails the sandbox', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-dns-'));
    try {
      const conf = join(dir, 'resolv.conf');
      await writeFile(conf, 'nameserver 192.0.2.53\nsearch corp.example.\n');
      const events: string[] = [];
      const c = new PodDnsConfigurer({ settings: { ...S, resolvConf: conf }, events: { event: (_p, type, reason) => events.push(`${type} ${reason}`) } });
      assert.deepEqual(await c.forPod(pod()), { servers: ['10.96.0.10'], searches: [...CLUSTER_SEARCH, 'corp.example'], options: ['ndots:5'] });
      await writeFile(conf, 'nameserver 192.0.2.99\n');
      assert.deepEqual((await c.forPod(pod({ dnsPolicy: 'Default', dnsConfig: { nameservers: ['1.1.1.1', '1.0.0.1', '8.8.8.8'] } }))).servers, ['192.0.2.99', '1.1.1.1', '1.0.0.1']);
      assert.deepEqual(events, ['Warning DNSConfigForming']);
      const missing = new PodDnsConfigurer({ settings: { ...S, resolvConf: join(dir, 'missing') } });
      await assert.rejects(missing.forPod(pod()), (err: { code?: string; message: string }) => err.code === 'ERR_FAILED_PRECONDITION' && err.message.includes('missing'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
