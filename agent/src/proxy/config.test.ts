import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { resolveProxyConfig } from './config.js';
import { parseConfigFile, resolveConfig } from '../config/config.js';

test('defaults: nftables, the server’s service range, 1 s / 30 s, tables kept on shutdown', () => {
  const c = resolveProxyConfig(undefined);
  assert.equal(c.mode, 'nftables');
  assert.equal(c.serviceCIDR, '10.96.0.0/16');
  assert.equal(c.clusterCIDR, '10.244.0.0/16');
  assert.deepEqual(c.nodePortAddresses, []);
  assert.equal(c.localhostNodePorts, true);
  assert.equal(c.minSyncPeriodMs, 1000);
  assert.equal(c.syncPeriodMs, 30_000);
  assert.equal(c.cleanupOnShutdown, false);
  assert.equal(c.localDNS, undefined);
});

test('the agent file’s proxy section and the flags', () => {
  const file = parseConfigFile(`
kind: KubeletConfiguration
proxy:
  mode: none
  clusterCIDR: 10.1.0.0/16
  nodePortAddresses: [192.168.0.0/24]
  syncPeriod: 1m
  cleanupOnShutdown: true
  localDNS: { ip: 10.1.0.1, port: 5353 }
`);
  const c = resolveConfig(file, { proxyMode: 'nftables', serviceCidr: '10.100.0.0/16' }, 'h').proxy;
  assert.equal(c.mode, 'nftables');
  assert.equal(c.serviceCIDR, '10.100.0.0/16');
  assert.equal(c.clusterCIDR, '10.1.0.0/16');
  assert.deepEqual(c.nodePortAddresses, ['192.168.0.0/24']);
  assert.equal(c.syncPeriodMs, 60_000);
  assert.equal(c.cleanupOnShutdown, true);
  assert.deepEqual(c.localDNS, { ip: '10.1.0.1', port: 5353 });
  assert.deepEqual(resolveProxyConfig({}, { nodeportAddresses: '10.0.0.0/8, 192.168.1.0/24' }).nodePortAddresses, ['10.0.0.0/8', '192.168.1.0/24']);
});

test('bad values are refused naming the field', () => {
  const bad: Array<[Parameters<typeof resolveProxyConfig>[0], Parameters<typeof resolveProxyConfig>[1], RegExp]> = [
    [{}, { proxyMode: 'ipvs' }, /--proxy-mode: must be one of nftables, iptables, none, got "ipvs"/],
    [{ serviceCIDR: '10.96.0.0' }, {}, /proxy\.serviceCIDR: must be an IPv4 CIDR/],
    [{ nodePortAddresses: ['x'] }, {}, /proxy\.nodePortAddresses\[0\]/],
    [{ minSyncPeriod: '0s' }, {}, /proxy\.minSyncPeriod/],
    [{ localDNS: { ip: 'nope' } }, {}, /proxy\.localDNS\.ip/],
    [{ localDNS: { ip: '10.0.0.1', port: 70000 } }, {}, /proxy\.localDNS\.port/],
  ];
  for (const [file, flags, re] of bad) {
    assert.throws(() => resolveProxyConfig(file, flags), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && re.test(err.message));
  }
});
