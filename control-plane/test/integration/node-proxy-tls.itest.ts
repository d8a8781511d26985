// pods/log through `nodelet server`'s node proxy verifies the agent: its serving certificate must
// be signed by the cluster CA (or the --kubelet-certificate-authority bundle) and name the address
// dialled (the node's InternalIP, an IP SAN). Before, the proxy connected with
// rejectUnauthorized: false to whatever the node reported, so a self-signed impostor got the logs
// request (and the server's client certificate handshake). A node address that leads back to
// the server is refused, and the certificate the server shows agents holds only the kubelet API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, NODES, PODS } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { createCa, issueCertificate, loadCa, type KeyPairPem } from '../../src/pki/certs.js';
import { startControlPlane, type ControlPlane } from '../../src/control-plane.js';
import { cleanups } from '@nodelet/base/testing';

async function standInAgent(t: { after(fn: () => unknown): void }, pair: KeyPairPem): Promise<number> {
  const cleanup = cleanups(t);
  const server = https.createServer({ cert: pair.certPem, key: pair.keyPem }, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(`logs of ${req.url?.split('?')[0]}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanup(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return (server.address() as AddressInfo).port;
}

async function podOn(admin: ApiClient, node: string, port: number): Promise<void> {
  await admin.create(NODES, { metadata: { name: node }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } });
  await admin.create(PODS, { metadata: { name: `p-${node}`, namespace: 'default' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] } });
}

const logs = (admin: ApiClient, node: string): Promise<string> => admin.getRaw(`/api/v1/namespaces/default/pods/p-${node}/log`).then((b) => b.toString());

async function controlPlane(t: { after(fn: () => unknown): void }, extra: { kubeletCertificateAuthority?: string } = {}): Promise<{ cp: ControlPlane; admin: ApiClient; dir: string }> {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-proxy-tls-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cp = await startControlPlane({ dataDir: join(dir, 'server'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger, ...extra });
  cleanup(() => cp.close());
  const admin = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanup(() => admin.close());
  return { cp, admin, dir };
}

test('node proxy: the agent must present a cluster-CA certificate for the InternalIP it is dialled at', { timeout: 60_000 }, async (t) => {
  const { cp, admin, dir } = await controlPlane(t);
  const pki = join(dir, 'server', 'pki');
  const ca = await loadCa({ certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8') });
  assert.equal(ca.certPem, cp.caPem);

  // A certificate from the cluster CA with the node's InternalIP: verified, logs flow.
  await podOn(admin, 'good', await standInAgent(t, await issueCertificate(ca, { commonName: 'system:node:good', usage: 'server', ips: ['127.0.0.1'], dnsNames: ['good'] })));
  assert.equal(await logs(admin, 'good'), 'logs of /containerLogs/default/p-good/c\n');

  // Self-signed (an impostor, or an agent whose CSR is not approved yet): refused, saying why.
  const selfCa = await createCa('impostor');
  await podOn(admin, 'selfsigned', await standInAgent(t, selfCa));
  await assert.rejects(logs(admin, 'selfsigned'), (err: Error) => {
    assert.match(err.message, /error dialing the agent of node "selfsigned" at 127\.0\.0\.1:\d+/);
    assert.match(err.message, /not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);
    assert.match(err.message, /kubectl get csr/);
    return true;
  });

  // The cluster's CA, but for another address than the one dialled.
  await podOn(admin, 'elsewhere', await standInAgent(t, await issueCertificate(ca, { commonName: 'system:node:elsewhere', usage: 'server', ips: ['192.0.2.7'], dnsNames: ['elsewhere'] })));
  await assert.rejects(logs(admin, 'elsewhere'), /ERR_TLS_CERT_ALTNAME_INVALID|IP: 127\.0\.0\.1 is not in the cert's list/);
});

test('node proxy: --kubelet-certificate-authority replaces the cluster CA for agents with their own certificates', { timeout: 60_000 }, async (t) => {
  const cleanup = cleanups(t);
  const own = await createCa('site-ca');
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-proxy-ca-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const caFile = join(dir, 'agents-ca.crt');
  writeFileSync(caFile, own.certPem);
  const { admin } = await controlPlane(t, { kubeletCertificateAuthority: caFile });
  await podOn(admin, 'site', await standInAgent(t, await issueCertificate(await loadCa(own), { commonName: 'site', usage: 'server', ips: ['127.0.0.1'] })));
  assert.equal(await logs(admin, 'site'), 'logs of /containerLogs/default/p-site/c\n');

  writeFileSync(caFile, 'not a certificate');
  await assert.rejects(startControlPlane({ dataDir: join(dir, 'other'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, kubeletCertificateAuthority: caFile }),
    /--kubelet-certificate-authority: ".*agents-ca\.crt" holds no PEM certificate/);
});

test('node proxy: an agent address that leads back to the server is refused, and agents see only a kubelet-API client', { timeout: 60_000 }, async (t) => {
  const cleanup = cleanups(t);
  const { cp, admin, dir } = await controlPlane(t);
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = https.request(`${cp.url}${path}`, { method, ca: cp.caPem, agent: false, headers: { Authorization: `Bearer ${cp.adminToken}`, 'Content-Type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  assert.equal((await call('POST', `${rbac}/clusterroles`, { metadata: { name: 'node-proxy-reader' }, rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }] })).status, 201);
  assert.equal((await call('POST', `${rbac}/clusterrolebindings`, {
    metadata: { name: 'carol-node-proxy' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-proxy-reader' }, subjects: [{ kind: 'User', name: 'carol' }],
  })).status, 201);
  const asCarol = { 'Impersonate-User': 'carol' };

  // 1. A node reports 127.0.0.1 and the API server's own port as its agent (a node may set its own
  //    status): before, carol's nodes/proxy read kube-system's Secrets with the server's
  //    system:masters certificate.
  await podOn(admin, 'loop', cp.port);
  const secrets = await call('GET', '/api/v1/nodes/loop/proxy/api/v1/namespaces/kube-system/secrets', undefined, asCarol);
  assert.equal(secrets.status, 400, secrets.body);
  assert.equal(JSON.parse(secrets.body).message, 'address not allowed');
  // logs/exec go to a loopback agent (upstream does too), but never to the server itself.
  const log = await call('GET', '/api/v1/namespaces/default/pods/p-loop/log');
  assert.equal(log.status, 400, log.body);
  assert.match(JSON.parse(log.body).message, /^address not allowed: 127\.0\.0\.1:\d+ is this API server$/);
  // Link-local (a cloud's metadata service) is refused for nodes/proxy as loopback is.
  await admin.resource(NODES).patchStatus('loop', { status: { addresses: [{ type: 'InternalIP', address: '169.254.169.254' }] } }, { type: 'merge' });
  assert.equal((await call('GET', '/api/v1/nodes/loop/proxy/latest/meta-data', undefined, asCarol)).status, 400);

  // 2. What an agent sees: a client certificate for system:kube-apiserver-kubelet-client, no group…
  const subjects: string[] = [];
  const ca = await loadCa({ certPem: cp.caPem, keyPem: readFileSync(join(dir, 'server', 'pki', 'ca.key'), 'utf8') });
  const serving = await issueCertificate(ca, { commonName: 'system:node:seen', usage: 'server', ips: ['127.0.0.1'] });
  const agent = https.createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    subjects.push(JSON.stringify({ CN: peer.subject?.CN, O: peer.subject?.O }));
    res.end('ok\n');
  });
  await new Promise<void>((r) => agent.listen(0, '127.0.0.1', () => r()));
  cleanup(() => new Promise((r) => agent.close(r)));
  await podOn(admin, 'seen', (agent.address() as AddressInfo).port);
  assert.equal(await logs(admin, 'seen'), 'ok\n');
  assert.deepEqual(subjects, [JSON.stringify({ CN: 'system:kube-apiserver-kubelet-client' })]);
  // …which may use the kubelet API and nothing else.
  const may = async (resourceAttributes: object): Promise<boolean> => JSON.parse((await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:kube-apiserver-kubelet-client', groups: ['system:authenticated'], resourceAttributes },
  })).body).status.allowed === true;
  assert.equal(await may({ verb: 'create', resource: 'nodes', subresource: 'proxy', name: 'seen' }), true);
  assert.equal(await may({ verb: 'list', resource: 'secrets', namespace: 'kube-system' }), false);
});
