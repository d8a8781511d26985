// The lab's route step, planned: which place (host, node namespaces) routes which pod CIDR where.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planPodRoutes, type NodeRouteInfo, type RoutePlace } from './pod-routes.js';

const NET = '10.230.0.0/24';
const host: RoutePlace = { addresses: ['127.0.0.1', '192.0.2.2', '10.230.0.1'] };
const ns2: RoutePlace = { netns: 'nodelet-n2', addresses: ['127.0.0.1', '10.230.0.2'] };
const ns3: RoutePlace = { netns: 'nodelet-n3', addresses: ['127.0.0.1', '10.230.0.3'] };
const n1: NodeRouteInfo = { name: 'n1', ip: '10.230.0.1', podCIDR: '10.229.0.0/24' };
const n2: NodeRouteInfo = { name: 'n2', ip: '10.230.0.2', podCIDR: '10.229.1.0/24' };
const n3: NodeRouteInfo = { name: 'n3', ip: '10.230.0.3', podCIDR: '10.229.2.0/24' };

test('every place routes every other node\'s pod CIDR through that node, not its own', () => {
  const plan = planPodRoutes([host, ns2, ns3], [n1, n2, n3], NET);
  assert.deepEqual(plan.get(''), [{ dst: '10.229.1.0/24', via: '10.230.0.2' }, { dst: '10.229.2.0/24', via: '10.230.0.3' }]);
  assert.deepEqual(plan.get('nodelet-n2'), [{ dst: '10.229.0.0/24', via: '10.230.0.1' }, { dst: '10.229.2.0/24', via: '10.230.0.3' }]);
  assert.deepEqual(plan.get('nodelet-n3'), [{ dst: '10.229.0.0/24', via: '10.230.0.1' }, { dst: '10.229.1.0/24', via: '10.230.0.2' }]);
});

test('no routes to a node no place holds (removed), without a pod CIDR, or off the node network', () => {
  const shared: NodeRouteInfo = { name: 'shared', ip: '192.0.2.2', podCIDR: '10.229.9.0/24' };
  const plan = planPodRoutes([host, ns2], [n1, n2, n3, shared, { name: 'new', ip: '10.230.0.4', podCIDR: '' }], NET);
  assert.deepEqual(plan.get(''), [{ dst: '10.229.1.0/24', via: '10.230.0.2' }]);
  assert.deepEqual(plan.get('nodelet-n2'), [{ dst: '10.229.0.0/24', via: '10.230.0.1' }]);
});

test('places off the node network are left alone (another lab\'s namespaces)', () => {
  const other: RoutePlace = { netns: 'nodelet-x', addresses: ['10.240.0.2'] };
  const plan = planPodRoutes([host, ns2, other], [n1, n2], NET);
  assert.equal(plan.has('nodelet-x'), false);
  assert.equal(plan.size, 2);
});
