import { test } from 'node:test';
import assert from 'node:assert/strict';
import { servingNames } from './node-certificates.js';

test('the serving CSR names exactly what the approver checks: node name, DNS-type addresses, IP-type addresses', () => {
  assert.equal(servingNames('n1', undefined), undefined, 'not registered: nothing to ask for yet');
  assert.equal(servingNames('n1', { metadata: { name: 'n1' }, status: {} }), undefined);
  assert.deepEqual(
    servingNames('n1', {
      metadata: { name: 'n1' },
      status: { addresses: [
        { type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }, { type: 'ExternalIP', address: '203.0.113.9' },
        { type: 'InternalDNS', address: 'n1.internal' }, { type: 'Hostname', address: 'box' },
      ] },
    }),
    { dnsNames: ['n1', 'n1.internal', 'box'], ips: ['10.0.0.5', '203.0.113.9'] },
  );
});
