// The kubelet-serving approver against the real API server (controllers/testing/real-cluster.ts),
// as kube-system/kubelet-serving-cert-approver with its own role; each node asks with its own
// client certificate, so the server sets spec.username and groups. A node writes its own Node
// status, so what it reports there vouches for nothing: unasked, a node gets only its Node name,
// or a renewal of what the cluster-CA certificate its agent serves already has. Service names
// and IPs, loopback and link-local are never approved; the rest waits for an admin.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CERTIFICATESIGNINGREQUESTS, generateKeyAndCsr, NODES, SERVICES, SIGNER_KUBELET_SERVING, type ApiClient, type CertificateSigningRequest } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { FakeClock } from '@nodelet/base/testing';
import { runController, SharedInformers } from '../runtime.js';
import { quiesce } from '../testing/quiesce.js';
import { startRealCluster } from '../testing/real-cluster.js';
import { KubeletServingCsrApprover } from './approver.js';
import type { ServedCertificate } from './serving-names.js';

const approved = (c: CertificateSigningRequest): boolean => !!c.status?.conditions?.some((x) => x.type === 'Approved' && x.status === 'True');

async function start(t: TestContext, served: Record<string, ServedCertificate> = {}) {
  const c = await startRealCluster();
  t.after(() => c.close());
  const client = c.admin;
  const approverClient = c.as('kubelet-serving-cert-approver');
  const clock = new FakeClock();
  const informers = new SharedInformers({ client: c.as(), clock, logger: noopLogger });
  const dialled: string[] = [];
  const approver = new KubeletServingCsrApprover({
    client: approverClient, informers, clock, random: Math.random, logger: noopLogger,
    options: { client: approverClient, logger: noopLogger, signal: new AbortController().signal, rootCaPem: 'the cluster CA' },
    servedCertificate: async (ip, port, ca) => {
      assert.equal(ca, 'the cluster CA');
      dialled.push(`${ip}:${port}`);
      return served[ip];
    },
  });
  const stop = new AbortController();
  informers.start();
  await informers.waitForSync(stop.signal);
  const running = runController(approver, stop.signal, noopLogger);
  t.after(async () => {
    stop.abort();
    await running;
    await informers.close();
  });
  let n = 0;
  const nodes: Record<string, ApiClient> = {};
  const request = async (o: { dnsNames?: string[]; ips?: string[]; node?: string }): Promise<string> => {
    const node = o.node ?? 'n1';
    const cn = `system:node:${node}`;
    const { csrPem } = await generateKeyAndCsr({ commonName: cn, organizations: ['system:nodes'], dnsNames: o.dnsNames ?? [], ips: o.ips ?? [] });
    const name = `csr-${++n}`;
    await (nodes[node] ??= await c.node(node)).resource(CERTIFICATESIGNINGREQUESTS).create({
      metadata: { name },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'] },
    });
    return name;
  };
  const isApproved = async (name: string): Promise<boolean> => approved(await client.resource(CERTIFICATESIGNINGREQUESTS).get(name));
  /** The approver has seen every request so far and decided on each. */
  const settled = (): Promise<void> => quiesce({ controllers: [approver], informers }, client);
  return { client, request, isApproved, dialled, settled };
}

test('unasked, a node gets its Node name only: the addresses it reports, Service names and IPs, loopback stay with the admin', async (t) => {
  const { client, request, isApproved, settled } = await start(t);
  assert.equal((await client.resource(SERVICES, 'default').get('kubernetes')).spec?.clusterIP, '10.96.0.1', 'the server\'s own Service');
  await client.resource(NODES).create({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'Hostname', address: 'n1.lab' }] } });
  await client.resource(NODES).patchStatus('n1', { status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'Hostname', address: 'n1.lab' }, { type: 'InternalIP', address: '10.96.0.1' }, { type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: 'kubernetes.default.svc' }] } }, { type: 'merge' });
  const ownName = await request({ dnsNames: ['n1'] });
  const reported = await request({ dnsNames: ['n1', 'n1.lab'], ips: ['192.0.2.10'] });
  const apiServer = await request({ dnsNames: ['n1', 'kubernetes.default.svc'], ips: ['10.96.0.1', '127.0.0.1'] });
  const serviceIp = await request({ dnsNames: ['n1'], ips: ['10.96.0.1'] });
  const loopback = await request({ ips: ['127.0.0.1'] });
  await pollUntil('the Node-name-only request approved', async () => ((await isApproved(ownName)) ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  // The others had their turn too and are still pending.
  await settled();
  for (const name of [reported, apiServer, serviceIp, loopback]) assert.equal(await isApproved(name), false, name);
});

test('a renewal is approved when the agent at each requested address serves this node a cluster-CA certificate with every name', async (t) => {
  const { client, request, isApproved, dialled, settled } = await start(t, {
    '192.0.2.10': { commonName: 'system:node:n1', dnsNames: ['n1'], ips: ['192.0.2.10'] },
    // Another node's agent, which n2 points its own status at.
    '192.0.2.20': { commonName: 'system:node:n1', dnsNames: ['n1'], ips: ['192.0.2.20'] },
  });
  await client.resource(NODES).create({ metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }], daemonEndpoints: { kubeletEndpoint: { Port: 10260 } } } });
  await client.resource(NODES).create({ metadata: { name: 'n2' }, status: { addresses: [{ type: 'InternalIP', address: '192.0.2.20' }] } });
  const renewal = await request({ dnsNames: ['n1'], ips: ['192.0.2.10'] });
  const widened = await request({ dnsNames: ['n1'], ips: ['192.0.2.10', '192.0.2.11'] });
  const borrowed = await request({ node: 'n2', dnsNames: ['n2'], ips: ['192.0.2.20'] });
  await pollUntil('the renewal approved', async () => ((await isApproved(renewal)) ? true : undefined), { timeoutMs: 8000, intervalMs: 25 });
  await settled();
  assert.equal(await isApproved(widened), false, 'an address the current certificate does not have');
  assert.equal(await isApproved(borrowed), false, 'a certificate served for another node');
  assert.ok(dialled.includes('192.0.2.10:10260'), 'the node API port from the Node status');
});
