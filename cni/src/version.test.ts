import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidateVersions, convertResult, negotiateVersion, parseResult, parseVersionReply } from './version.js';

const v1 = {
  cniVersion: '1.1.0',
  interfaces: [{ name: 'eth0', mac: 'aa:bb:cc:dd:ee:ff', mtu: 1400, sandbox: '/run/netns/x' }],
  ips: [{ address: '10.233.0.5/24', gateway: '10.233.0.1', interface: 0 }, { address: 'fd00::5/64', interface: 0 }],
  routes: [{ dst: '0.0.0.0/0', gw: '10.233.0.1', mtu: 1300, table: 100 }, { dst: '::/0' }],
  dns: { nameservers: ['10.233.0.10'] },
};

test('1.1.0 → 0.4.0 adds ips[].version and drops 1.1 fields; back up is lossless for 1.0 fields', () => {
  const r = parseResult('p', JSON.stringify(v1), '1.0.0');
  const down = convertResult(r, '0.4.0') as { ips: Array<{ version: string }>; routes: object[]; interfaces: object[] };
  assert.deepEqual(down.ips.map((i) => i.version), ['4', '6']);
  assert.deepEqual(down.routes[0], { dst: '0.0.0.0/0', gw: '10.233.0.1' });
  assert.deepEqual(down.interfaces[0], { name: 'eth0', mac: 'aa:bb:cc:dd:ee:ff', sandbox: '/run/netns/x' });
  const up = parseResult('p', JSON.stringify(down), '1.0.0');
  assert.deepEqual(convertResult(up, '1.0.0'), { cniVersion: '1.0.0', interfaces: down.interfaces, ips: v1.ips, routes: down.routes, dns: v1.dns });
  assert.equal((convertResult(r, '1.0.0').routes as Array<{ table?: number }>)[0]!.table, 100, '1.0 ↔ 1.1 keeps the fields');
});

test('to 0.2.0 keeps first IPv4/IPv6 with family routes; fails without IPs', () => {
  const r = parseResult('p', JSON.stringify(v1), '1.0.0');
  assert.deepEqual(convertResult(r, '0.2.0'), {
    cniVersion: '0.2.0',
    ip4: { ip: '10.233.0.5/24', gateway: '10.233.0.1', routes: [{ dst: '0.0.0.0/0', gw: '10.233.0.1' }] },
    ip6: { ip: 'fd00::5/64', routes: [{ dst: '::/0' }] },
    dns: v1.dns,
  });
  assert.throws(() => convertResult({ cniVersion: '1.0.0' }, '0.2.0'), /needs at least one IP/);
  const legacy = parseResult('p', JSON.stringify({ cniVersion: '0.2.0', ip4: { ip: '10.1.0.2/16', routes: [{ dst: '0.0.0.0/0' }] } }), '1.0.0');
  assert.deepEqual(legacy.ips, [{ address: '10.1.0.2/16' }]);
});

test('a result without cniVersion takes the assumed version; 1.x omits empty dns; garbage is code 6', () => {
  const r = parseResult('p', JSON.stringify({ ips: [{ address: '10.0.0.2/8' }], dns: {} }), '1.0.0');
  assert.equal(r.cniVersion, '1.0.0');
  assert.equal(convertResult(r, '1.0.0').dns, undefined);
  assert.throws(() => parseResult('bridge', 'garbage', '1.0.0'), (e: { cniCode: number; plugin: string }) => e.cniCode === 6 && e.plugin === 'bridge');
  assert.throws(() => parseResult('p', JSON.stringify({ cniVersion: '1.0.0', ips: [{}] }), '1.0.0'), /"ips" must be a list/);
});

test('negotiation and VERSION replies', () => {
  assert.deepEqual(candidateVersions({ cniVersion: '1.1.0', cniVersions: ['0.4.0', '1.0.0', '7.0.0'] }), ['1.1.0', '1.0.0', '0.4.0']);
  assert.equal(negotiateVersion('bridge', ['1.1.0', '1.0.0'], { cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] }), '1.0.0');
  assert.throws(() => negotiateVersion('firewall', ['0.3.1'], { cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] }), /plugin "firewall": incompatible CNI versions/);
  assert.deepEqual(parseVersionReply('p', '{"cniVersion":"0.2.0"}').supportedVersions, ['0.1.0', '0.2.0']);
  assert.throws(() => parseVersionReply('p', 'nope'), { cniCode: 6 });
});
