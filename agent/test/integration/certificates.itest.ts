// A joined agent's credentials, against a real API server with the kubelet-serving approver and
// the CSR signer, node credentials that live 60 s and certificates the signer issues for 60 s:
//   - the serving certificate comes through the CSR flow (the first request, naming the node's
//     address, approved as an admin does: the cluster does not take a node's word for its
//     address), is stored as one 0600 PEM file behind kubelet-server-current.pem, and the API
//     server's proxy verifies it (IP SAN = InternalIP);
//   - it is rotated in the running agent, the renewal approved by the cluster itself (the agent at
//     that address serves a certificate with those names): new connections get the new one, a
//     `logs -f` stream opened before keeps streaming;
//   - the node credential is renewed before it expires: past the first credential's expiry (the
//     old token is refused by then) the node stays Ready and a new pod starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { lstat, readFile, readlink, stat } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import tls from 'node:tls';
import { hostname } from 'node:os';
import { approveNodeServingCsrs, CERTIFICATESIGNINGREQUESTS, LEASES, NODES, PODS, readCredential, SIGNER_KUBELET_SERVING, type CertificateSigningRequest } from '@nodelet/api';
import { pickInternalIP } from '../../src/node/machine-info.js';
import { getPod, podSpec, skipUnlessRoot, startHarness } from './harness.js';
import { pollUntil } from '@nodelet/base';

const TTL_MS = 60_000;

/** The serial of the certificate a fresh, CA-verified TLS connection to the agent gets (throws if it does not verify). */
function servedSerial(port: number, ca: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port, ca }, () => {
      const serial = s.getPeerCertificate().serialNumber;
      s.end();
      resolve(serial);
    });
    s.on('error', reject);
  });
}

/** 401 or 200 for a request with exactly this bearer token. */
function statusWithToken(url: string, ca: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    https.get(`${url}/api/v1/nodes`, { ca, agent: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

test('agent credentials: CSR-issued serving certificate verified by the proxy and rotated in place; node credential renewed past its expiry', { timeout: 300_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  // A renewal is checked by dialling the agent at the requested address, never a loopback one.
  const address = pickInternalIP();
  if (address === '127.0.0.1') return t.skip('this machine has no non-loopback IPv4 address for the agent');
  const h = await startHarness('certs', {}, 9, { nodeAddress: address, asNode: { controllers: ['kubeletservingapproving', 'csrsigning'], nodeCredentialTtlMs: TTL_MS, clusterSigningDurationMs: TTL_MS } });
  t.after(() => h.stop());
  const { cp } = h;
  const port = h.agent.nodeApiPort!;
  const firstCredential = await readCredential({ kind: 'tokenFile', path: join(h.dir, 'agent.token') });
  const firstExpiry = firstCredential.lifetime!.expiresAt;
  const servingCsrs = async (): Promise<CertificateSigningRequest[]> =>
    (await h.api.list(CERTIFICATESIGNINGREQUESTS)).items.filter((c) => c.spec.signerName === SIGNER_KUBELET_SERVING).sort((a, b) => a.metadata.creationTimestamp!.localeCompare(b.metadata.creationTimestamp!));

  // 1. The serving certificate: requested by the node itself; its address is the node's word, so
  //    the request waits until an admin approves it (here, as `nodelet lab up` does); then signed, served.
  const first = await pollUntil('the node\'s serving CSR', async () => (await servingCsrs())[0], { timeoutMs: 30_000 });
  assert.equal(first.spec.username, `system:node:${h.nodeName}`, 'requested with the node credential');
  assert.deepEqual(await approveNodeServingCsrs(h.api, { nodeName: h.nodeName, dnsNames: [h.nodeName, hostname().toLowerCase()], ips: [address], reason: 'ByTheAdmin' }), [first.metadata.name]);
  const firstSerial = await pollUntil('a serving certificate the cluster CA verifies', () => servedSerial(port, cp.caPem, address).catch(() => undefined), { timeoutMs: 30_000 });
  const pki = join(h.dir, 'root', 'pki');
  const current = join(pki, 'kubelet-server-current.pem');
  assert.ok((await lstat(current)).isSymbolicLink());
  const target = join(pki, await readlink(current));
  assert.match(target, /kubelet-server-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d(-\d+)?\.pem$/);
  assert.equal((await stat(target)).mode & 0o777, 0o600);
  const pem = await readFile(current, 'utf8');
  assert.match(pem, /BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
  const leaf = new X509Certificate(pem);
  assert.equal(leaf.subject, `CN=system:node:${h.nodeName}\nO=system:nodes`);
  assert.ok((leaf.subjectAltName ?? '').split(', ').includes(`IP Address:${address}`), leaf.subjectAltName);

  // 2. Logs through the API server's verifying proxy; a follow stream stays open across rotation.
  await h.api.create(PODS, podSpec(h, 'ticker', { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done'] }] }));
  await pollUntil('ticker Running', async () => ((await getPod(h, 'ticker')).status?.phase === 'Running' ? true : undefined), { timeoutMs: 60_000 });
  assert.match((await h.api.getRaw('/api/v1/namespaces/default/pods/ticker/log')).toString(), /^tick 0$/m);
  const stream = await h.api.stream('/api/v1/namespaces/default/pods/ticker/log', { query: { follow: true } });
  t.after(() => stream.destroy());
  let followed = '';
  stream.on('data', (d: Buffer) => (followed += d.toString()));

  // 3. Rotation at 70–90 % of the minute the certificate has: a new certificate for new connections.
  const secondSerial = await pollUntil('the serving certificate to rotate', async () => {
    const s = await servedSerial(port, cp.caPem, address);
    return s !== firstSerial ? s : undefined;
  }, { timeoutMs: 90_000, intervalMs: 500 });
  assert.notEqual(secondSerial, firstSerial);
  const renewal = (await servingCsrs()).find((c) => c.metadata.name !== first.metadata.name && c.status?.certificate);
  assert.equal(renewal?.status?.conditions?.find((c) => c.type === 'Approved')?.reason, 'AutoApproved', 'the renewal was approved by the cluster');
  const atRotation = followed.length;
  await pollUntil('the follow stream opened before the rotation to keep streaming', () => followed.length > atRotation + 20, { timeoutMs: 10_000 });
  assert.match((await h.api.getRaw('/api/v1/namespaces/default/pods/ticker/log', { query: { tailLines: 1 } })).toString(), /^tick \d+\n$/, 'new proxy connections verify the rotated certificate');

  // 4. The node credential was renewed before it expired; the first one is refused past its expiry.
  await pollUntil('past the first credential\'s expiry', () => Date.now() > firstExpiry + 2000, { timeoutMs: TTL_MS + 10_000, intervalMs: 500 });
  const now = await readCredential({ kind: 'tokenFile', path: join(h.dir, 'agent.token') });
  assert.notEqual(now.token, firstCredential.token, 'the token file holds a renewed credential');
  assert.ok(now.lifetime && now.lifetime.expiresAt > Date.now(), 'with its lifetime recorded');
  assert.equal(await statusWithToken(cp.url, cp.caPem, firstCredential.token), 401, 'the first credential has expired');
  assert.equal(await statusWithToken(cp.url, cp.caPem, now.token), 200);
  // Still Ready, the Lease renewed after the first credential's expiry, and a new pod starts.
  await pollUntil('Lease renewed past the first expiry', async () => {
    const lease = await h.api.get(LEASES, h.nodeName, { namespace: 'kube-node-lease' });
    return Date.parse(String(lease.spec?.renewTime)) > firstExpiry ? true : undefined;
  }, { timeoutMs: 20_000 });
  const node = await h.api.get(NODES, h.nodeName);
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  await h.api.create(PODS, podSpec(h, 'after-expiry', { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] }));
  await pollUntil('a pod created after the first credential expired to run', async () => ((await getPod(h, 'after-expiry')).status?.phase === 'Running' ? true : undefined), { timeoutMs: 60_000 });
  assert.ok(h.agent.nodeCredentials?.current, 'the agent knows its credential\'s lifetime');
});

test('approver down: the agent serves a self-signed certificate the proxy refuses, until an admin approves its CSR', { timeout: 180_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('certs-pending', {}, 10, { asNode: { controllers: ['csrsigning'] } });
  t.after(() => h.stop());
  const { cp } = h;
  const port = h.agent.nodeApiPort!;
  const pending = await pollUntil('the node\'s serving CSR', async () =>
    (await h.api.list(CERTIFICATESIGNINGREQUESTS)).items.find((c) => c.spec.signerName === SIGNER_KUBELET_SERVING && c.spec.username === `system:node:${h.nodeName}`), { timeoutMs: 30_000 });
  await assert.rejects(servedSerial(port, cp.caPem), /self[- ]signed|unable to verify/i, 'self-signed meanwhile');
  await h.api.create(PODS, podSpec(h, 'quiet', { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo hello; sleep 3600'] }] }));
  await pollUntil('quiet Running', async () => ((await getPod(h, 'quiet')).status?.phase === 'Running' ? true : undefined), { timeoutMs: 60_000 });
  await assert.rejects(h.api.getRaw('/api/v1/namespaces/default/pods/quiet/log'), /not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\).*kubectl get csr/);

  // `kubectl certificate approve <csr>`: the signer signs, the agent (still waiting on it) serves it.
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await h.api.update(CERTIFICATESIGNINGREQUESTS, { ...pending, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved by the test', lastUpdateTime: now }] } }, { subresource: 'approval' });
  await pollUntil('a verified serving certificate', () => servedSerial(port, cp.caPem).catch(() => undefined), { timeoutMs: 30_000 });
  assert.equal((await h.api.getRaw('/api/v1/namespaces/default/pods/quiet/log')).toString(), 'hello\n');
});
