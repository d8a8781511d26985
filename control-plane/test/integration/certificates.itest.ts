// certificates.k8s.io end to end on a real control plane (controllers with their own identities):
// a user certificate through the kube-apiserver-client signer logs in with CN/O as user/groups;
// a node's serving certificate for its Node name is approved and signed by itself, one naming an
// address (even one its status reports) waits for an admin; approval and signing are authorized.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiClient, CERTIFICATESIGNINGREQUESTS, generateKeyAndCsr, NODES, requestCertificate, SIGNER_KUBE_APISERVER_CLIENT, SIGNER_KUBELET_CLIENT,
  SIGNER_KUBELET_SERVING, type CertificateSigningRequest, type KubeObject, type ResourceType,
} from '@nodelet/api';
import { hasCode, noopLogger, pollUntil } from '@nodelet/base';
import { startControlPlane } from '../../src/control-plane.js';
import { cleanups } from '@nodelet/base/testing';

const REVIEWS: ResourceType = { group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', singular: 'selfsubjectreview', namespaced: false };
const CREDENTIALS: ResourceType = { group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential', namespaced: false };

test('certificate signing requests: user client certificates, node serving certificates, approval and signing rules', { timeout: 120_000 }, async (t) => {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-csr-it-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', logger: noopLogger });
  cleanup(() => cp.close());
  const clients: ApiClient[] = [];
  cleanup(() => clients.forEach((c) => c.close()));
  const client = (o: { token?: string; cert?: string; key?: string }): ApiClient => {
    const c = new ApiClient({ server: cp.url, ca: cp.caPem, ...o });
    clients.push(c);
    return c;
  };
  const admin = client({ token: cp.adminToken });
  const approve = async (who: ApiClient, name: string): Promise<void> => {
    const csr = await admin.get(CERTIFICATESIGNINGREQUESTS, name);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await who.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'ByTest', message: 'ok', lastUpdateTime: now }] } }, { subresource: 'approval' });
  };

  // 1. A user certificate (what `nodelet kubeconfig create` does): pending until an admin approves.
  const alice = await generateKeyAndCsr({ commonName: 'alice', organizations: ['devs'] });
  const issuing = requestCertificate(admin, { csrPem: alice.csrPem, signerName: SIGNER_KUBE_APISERVER_CLIENT, usages: ['digital signature', 'client auth'], generateName: 'alice-', pollMs: 100 });
  const pending = await pollUntil('the alice CSR', async () => (await admin.list(CERTIFICATESIGNINGREQUESTS)).items.find((c) => c.metadata.name?.startsWith('alice-')), { timeoutMs: 10_000 });
  assert.equal(pending.spec.username, 'system:admin', 'the requester is recorded by the server');
  // Approving needs `approve` on the signer: a node cannot.
  const node = (await admin.create(CREDENTIALS, { metadata: {}, spec: { nodeName: 'n1' } } as never)) as unknown as { status: { token: string } };
  const nodeClient = client({ token: node.status.token });
  await assert.rejects(approve(nodeClient, pending.metadata.name!), (err: unknown) => hasCode(err, 'ERR_PERMISSION_DENIED'));
  await approve(admin, pending.metadata.name!);
  const { certPem } = await issuing;
  const aliceClient = client({ cert: certPem, key: alice.keyPem });
  const who = (await aliceClient.create(REVIEWS, { metadata: {} } as KubeObject)) as unknown as { status: { userInfo: { username: string; groups: string[] } } };
  assert.deepEqual(who.status.userInfo, { username: 'alice', groups: ['devs', 'system:authenticated'] });
  await assert.rejects(aliceClient.list(NODES), (err: unknown) => hasCode(err, 'ERR_PERMISSION_DENIED'), 'a new user has no rights until bound');

  // 2. The kube-apiserver-client signer never issues system:masters.
  const masters = await generateKeyAndCsr({ commonName: 'mallory', organizations: ['system:masters'] });
  await assert.rejects(requestCertificate(admin, { csrPem: masters.csrPem, signerName: SIGNER_KUBE_APISERVER_CLIENT, usages: ['client auth'] }), /system:masters group is not allowed/);

  // 3. A node's serving certificate for its Node name: approved and signed without anyone.
  await admin.create(NODES, { metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'Hostname', address: 'n1.lab' }] } } as never);
  const serving = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] });
  const issued = await requestCertificate(nodeClient, { csrPem: serving.csrPem, signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'], timeoutMs: 20_000, pollMs: 100 });
  assert.match(issued.certPem, /BEGIN CERTIFICATE/);
  const done = await admin.get(CERTIFICATESIGNINGREQUESTS, issued.csrName);
  assert.equal(done.status?.conditions?.find((c) => c.type === 'Approved')?.reason, 'AutoApproved');
  // …but one that names an address waits for an admin, even one the Node reports (its own word),
  // and the API server's names and Service IP are never given to a node unasked.
  for (const sans of [{ dnsNames: ['n1', 'n1.lab'], ips: ['192.0.2.10'] }, { dnsNames: ['n1'], ips: ['198.51.100.7'] }, { dnsNames: ['kubernetes.default.svc'], ips: ['10.96.0.1', '127.0.0.1'] }]) {
    const stranger = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], ...sans });
    await assert.rejects(
      requestCertificate(nodeClient, { csrPem: stranger.csrPem, signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'], timeoutMs: 3_000, pollMs: 100 }),
      /was not approved in time: approve it with `kubectl certificate approve/,
    );
  }
  // …and a node cannot ask for another node's certificate.
  const other = await generateKeyAndCsr({ commonName: 'system:node:n2', organizations: ['system:nodes'], dnsNames: ['n2'] });
  await assert.rejects(
    requestCertificate(nodeClient, { csrPem: other.csrPem, signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'], timeoutMs: 3_000, pollMs: 100 }),
    /was not approved in time/,
  );

  // 4. An approved request that breaks its signer's rules fails instead of being signed.
  const bad = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] });
  const failing = requestCertificate(admin, { csrPem: bad.csrPem, signerName: SIGNER_KUBELET_CLIENT, usages: ['digital signature', 'client auth'], generateName: 'bad-', pollMs: 100 });
  const badCsr: CertificateSigningRequest = await pollUntil('the bad CSR', async () => (await admin.list(CERTIFICATESIGNINGREQUESTS)).items.find((c) => c.metadata.name?.startsWith('bad-')), { timeoutMs: 10_000 });
  await approve(admin, badCsr.metadata.name!);
  await assert.rejects(failing, /failed: SignerValidationFailure a kubelet client certificate may not have subject alternative names/);
});
