import { test } from 'node:test';
import assert from 'node:assert/strict';
import { affinityEntries, mapKeys, type NftDocument } from './nft.js';

const doc = (affinityElems: unknown[], rule = 'x'): NftDocument => ({
  nftables: [
    { metainfo: { version: '1.0.6' } },
    { table: { family: 'ip', name: 'nodelet-proxy', handle: 4 } },
    { map: { family: 'ip', name: 'service-ips', table: 'nodelet-proxy', handle: 5, type: ['ipv4_addr', 'inet_proto', 'inet_service'], map: 'verdict', elem: [[{ concat: ['10.96.0.5', 'tcp', 80] }, { goto: { target: 's' } }], [{ elem: { val: { concat: ['10.96.0.6', 'udp', 53] }, comment: 'c' } }, 'drop']] } },
    { set: { family: 'ip', name: 'affinity-ABC-default/web/tcp/__10.244.0.11/8080', table: 'nodelet-proxy', handle: 6, type: 'ipv4_addr', flags: ['timeout'], timeout: 600, elem: affinityElems } },
    { rule: { family: 'ip', table: 'nodelet-proxy', chain: 'c', handle: 7, expr: [{ [rule]: null }] } },
  ],
});

test('affinity entries and map keys are read from nft -j', () => {
  const d = doc([{ elem: { val: '10.244.5.5', expires: 500 } }, { elem: { val: '10.244.5.6', expires: 0 } }]);
  assert.deepEqual([...affinityEntries(d)], [['affinity-ABC-default/web/tcp/__10.244.0.11/8080', [{ ip: '10.244.5.5', expiresS: 500 }]]]);
  assert.deepEqual(mapKeys(d, 'service-ips'), ['10.96.0.5 . tcp . 80', '10.96.0.6 . udp . 53']);
  assert.deepEqual(mapKeys(d, 'missing'), []);
});
