// The node network's address arithmetic: CIDR checks, the host's address, node address picks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { formatIpv4, inCidr, netnsExec, netnsName, nodeNetworkHostAddress, parseIpv4, parseNodeNetworkCidr, pickNodeAddress, routerNetnsName, vethName } from './node-network.js';

test('parseIpv4 / formatIpv4 round-trip and reject malformed addresses', () => {
  for (const a of ['0.0.0.0', '10.230.0.1', '255.255.255.255']) assert.equal(formatIpv4(parseIpv4(a)), a);
  for (const bad of ['10.230.0', '10.230.0.256', '10.230.0.1.2', 'a.b.c.d', '10.230.0.-1', '']) {
    assert.throws(() => parseIpv4(bad), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'), bad);
  }
});

test('parseNodeNetworkCidr takes /16 to /29 network addresses only', () => {
  assert.deepEqual(parseNodeNetworkCidr('10.230.0.0/24'), { base: parseIpv4('10.230.0.0'), prefix: 24 });
  assert.deepEqual(parseNodeNetworkCidr('10.230.0.8/29'), { base: parseIpv4('10.230.0.8'), prefix: 29 });
  for (const bad of ['10.230.0.0', '10.230.0.0/8', '10.230.0.0/30', '10.230.0.1/24', '10.230.0.0/24/1', 'fd00::/64', '10.230.0.0/x']) {
    assert.throws(() => parseNodeNetworkCidr(bad), (e) => hasCode(e, 'ERR_INVALID_ARGUMENT'), bad);
  }
});

test('the host takes the first address; nodes the lowest free one after it, never the broadcast', () => {
  assert.equal(nodeNetworkHostAddress('10.230.0.0/24'), '10.230.0.1');
  assert.equal(pickNodeAddress('10.230.0.0/24', ['10.230.0.1']), '10.230.0.2');
  assert.equal(pickNodeAddress('10.230.0.0/24', ['10.230.0.1', '10.230.0.2', '10.230.0.4']), '10.230.0.3');
  assert.equal(pickNodeAddress('10.230.0.8/29', ['10.230.0.10', '10.230.0.11', '10.230.0.12', '10.230.0.13']), '10.230.0.14');
  assert.throws(() => pickNodeAddress('10.230.0.8/29', ['10.230.0.10', '10.230.0.11', '10.230.0.12', '10.230.0.13', '10.230.0.14']), (e) => hasCode(e, 'ERR_FAILED_PRECONDITION'));
});

test('inCidr', () => {
  assert.equal(inCidr('10.230.0.7', '10.230.0.0/24'), true);
  assert.equal(inCidr('10.230.1.7', '10.230.0.0/24'), false);
  assert.equal(inCidr('10.229.3.4', '10.229.0.0/16'), true);
});

test('names: the namespace follows the node, the veth fits 15 characters, nsenter changes only the network', () => {
  assert.equal(netnsName('node-2'), 'nodelet-node-2');
  // A router's name has a character no node name has, so it is never another node's namespace.
  assert.equal(routerNetnsName('node-2'), 'nodelet-node-2_router');
  assert.notEqual(vethName(routerNetnsName('node-2')), vethName('node-2'));
  const v = vethName('a-very-long-node-name.example.com');
  assert.match(v, /^nlv[0-9a-f]{8}$/);
  assert.notEqual(vethName('n1'), vethName('n2'));
  assert.deepEqual(netnsExec('nodelet-n2'), ['nsenter', '--net=/run/netns/nodelet-n2']);
});
