import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../config/config.js';
import { parseBindAddress, resolveDnsConfig } from './config.js';

describe('agent DNS config', () => {
  it("defaults to the kubelet's and kubeadm's values", () => {
    assert.deepEqual(resolveDnsConfig({}, {}), { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf', clusterDNSResolver: true, clusterDNSPodRecords: 'insecure' });
    const c = resolveConfig({}, {}, 'node-1');
    assert.deepEqual(c.clusterDNS, ['10.96.0.10']);
    assert.equal(c.clusterDNSBindAddress, undefined);
  });

  it('reads the file and lets the flags win', () => {
    const c = resolveDnsConfig({ clusterDNS: ['10.0.0.10'], clusterDomain: 'Corp.Local.', resolvConf: '', clusterDNSBindAddress: '127.0.0.1:1053', clusterDNSPodRecords: 'verified' }, {});
    assert.deepEqual(c, { clusterDNS: ['10.0.0.10'], clusterDomain: 'corp.local', resolvConf: '', clusterDNSResolver: true, clusterDNSBindAddress: { ip: '127.0.0.1', port: 1053 }, clusterDNSPodRecords: 'verified' });
    assert.deepEqual(resolveDnsConfig({ clusterDNS: ['10.0.0.10'] }, { clusterDns: '10.1.0.10, 10.2.0.10', clusterDomain: 'k8s.example', resolvConf: '/run/r.conf' }), {
      clusterDNS: ['10.1.0.10', '10.2.0.10'], clusterDomain: 'k8s.example', resolvConf: '/run/r.conf', clusterDNSResolver: true, clusterDNSPodRecords: 'insecure',
    });
  });

  it('refuses bad values naming the field', () => {
    assert.throws(() => resolveDnsConfig({ clusterDNS: ['nope'] }, {}), /invalid agent config: clusterDNS: must be a list of IP addresses/);
    assert.throws(() => resolveDnsConfig({}, { clusterDns: '10.0.0.1,x' }), /--cluster-dns: must be a list of IP addresses/);
    assert.throws(() => resolveDnsConfig({ clusterDomain: 'bad_domain' }, {}), /clusterDomain: must be a DNS domain/);
    assert.throws(() => resolveDnsConfig({ clusterDNSPodRecords: 'yes' }, {}), /clusterDNSPodRecords: must be one of insecure, verified, disabled/);
    assert.throws(() => resolveDnsConfig({ clusterDNSBindAddress: '1.2.3.4:99999' }, {}), /clusterDNSBindAddress: must be an IP/);
    assert.throws(() => resolveConfig({ clusterDNSResolver: 'no' as unknown as boolean }, {}, 'n'), (e: { code?: string }) => e.code === 'ERR_INVALID_ARGUMENT');
  });

  it('bind addresses: ip, ip:port, [v6]:port, bare v6', () => {
    assert.deepEqual(parseBindAddress('f', '192.0.2.2'), { ip: '192.0.2.2', port: 53 });
    assert.deepEqual(parseBindAddress('f', '192.0.2.2:5353'), { ip: '192.0.2.2', port: 5353 });
    assert.deepEqual(parseBindAddress('f', '[fd00::2]:5353'), { ip: 'fd00::2', port: 5353 });
    assert.deepEqual(parseBindAddress('f', 'fd00::2'), { ip: 'fd00::2', port: 53 });
    assert.throws(() => parseBindAddress('f', 'host:53'));
    assert.throws(() => parseBindAddress('f', '[1.2.3.4]:53'));
  });
});
