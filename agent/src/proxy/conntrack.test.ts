import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conntrackArgs, staleUdpEntries } from './conntrack.js';
import { buildModel } from './model.js';
import { service, slice, type EpSpec } from './testing/fixtures.js';

const udp = service('dns', '10.96.0.10', { type: 'NodePort', ports: [{ port: 53, nodePort: 30053, protocol: 'UDP' }] });
const model = (eps: EpSpec[], svc = udp) => buildModel({ services: [svc], slices: [slice('dns', eps, [{ port: 53, protocol: 'UDP' }])], nodeName: 'n1', sctp: false });

test('0 → n: every entry to the ClusterIP port and the NodePort goes', () => {
  assert.deepEqual(staleUdpEntries(model([]), model([{ ip: '10.244.0.11' }]), 'n1'), [
    { kind: 'service', ip: '10.96.0.10', port: 53 },
    { kind: 'nodeport', port: 30053 },
  ]);
});

test('a replaced backend: the entries DNATed to the old one go', () => {
  assert.deepEqual(staleUdpEntries(model([{ ip: '10.244.0.11' }]), model([{ ip: '10.244.0.12' }]), 'n1'), [
    { kind: 'service-endpoint', ip: '10.96.0.10', endpointIP: '10.244.0.11' },
    { kind: 'nodeport-endpoint', port: 30053, endpointIP: '10.244.0.11' },
  ]);
});

test('nothing for unchanged endpoints, added endpoints beside served ones, or TCP', () => {
  assert.deepEqual(staleUdpEntries(model([{ ip: '10.244.0.11' }]), model([{ ip: '10.244.0.11' }, { ip: '10.244.0.12' }]), 'n1'), []);
  const tcp = service('dns', '10.96.0.10', { ports: [{ port: 53, protocol: 'TCP' }] });
  const t = (eps: EpSpec[]) => buildModel({ services: [tcp], slices: [slice('dns', eps, [{ port: 53, protocol: 'TCP' }])], nodeName: 'n1', sctp: false });
  assert.deepEqual(staleUdpEntries(t([]), t([{ ip: '10.244.0.11' }]), 'n1'), []);
});

test('a deleted service: entries to its endpoints go', () => {
  assert.deepEqual(staleUdpEntries(model([{ ip: '10.244.0.11' }]), [], 'n1').map((e) => e.kind), ['service-endpoint', 'nodeport-endpoint']);
});

test('conntrack arguments', () => {
  assert.deepEqual(conntrackArgs({ kind: 'service', ip: '10.96.0.10', port: 53 }), ['-D', '-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53']);
  assert.deepEqual(conntrackArgs({ kind: 'nodeport-endpoint', port: 30053, endpointIP: '10.244.0.11' }), ['-D', '-p', 'udp', '--orig-port-dst', '30053', '--dst-nat', '10.244.0.11']);
});
