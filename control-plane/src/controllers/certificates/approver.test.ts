// The kubelet-serving approver against the in-memory API server: an agent asks for its serving
// certificate right after registering, so its CSR may reach the approver before the Node does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CERTIFICATESIGNINGREQUESTS, generateKeyAndCsr, NODES, SIGNER_KUBELET_SERVING, type CertificateSigningRequest } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { startControllerManager } from '../index.js';

const approved = (c: CertificateSigningRequest): boolean => !!c.status?.conditions?.some((x) => x.type === 'Approved' && x.status === 'True');

test('a serving CSR that arrived before its Node (or before the address it names) is approved once the Node has it', async (t) => {
  const server = await InMemoryApiServer.start();
  t.after(() => server.close());
  const client = server.client();
  const { csrPem } = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ips: ['192.0.2.10'] });
  server.seed(CERTIFICATESIGNINGREQUESTS, {
    metadata: { name: 'csr-early' },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'], username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] },
  });
  const cm = await startControllerManager({ client, logger: noopLogger, signal: new AbortController().signal, clock: new FakeClock(), controllers: ['kubeletservingapproving'] });
  t.after(() => cm.close());
  const csrs = client.resource(CERTIFICATESIGNINGREQUESTS);
  const nodes = client.resource(NODES);

  await new Promise((r) => setTimeout(r, 300));
  assert.equal(approved(await csrs.get('csr-early')), false, 'no Node yet: left pending');
  // Registered, but without the address yet (the agent patches status after creating the Node).
  await nodes.create({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'Hostname', address: 'n1' }] } });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(approved(await csrs.get('csr-early')), false, 'the Node does not have 192.0.2.10 yet');
  await nodes.patchStatus('n1', { status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'Hostname', address: 'n1' }] } }, { type: 'merge' });
  await pollUntil('approved', async () => (approved(await csrs.get('csr-early')) ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
});
