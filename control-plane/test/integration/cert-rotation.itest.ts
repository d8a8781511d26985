// Certificate rotation in a running `nodelet server`: it starts with a serving certificate and an
// apiserver-kubelet-client certificate that expire in seconds, re-issues both while serving, and
// (1) an open watch keeps streaming on the connection that negotiated the old certificate,
// (2) a new TLS connection gets the new one, (3) the node proxy presents the new client pair, also
// to an agent whose keep-alive connection from before the rotation is still open.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import tls, { type TLSSocket } from 'node:tls';
import { ApiClient, CONFIGMAPS, NODES, PODS } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { KUBERNETES_SERVICE_NAMES, startControlPlane } from '../../src/control-plane.js';
import { issueCertificate, loadCa, type LoadedCa } from '../../src/pki/certs.js';
import { writePairAtomic } from '../../src/pki/pair-files.js';
import { AGENT_CLIENT_USER, ensurePki, hostAddresses } from '../../src/pki/pki.js';
import { cleanups } from '@nodelet/base/testing';

/**
 * Certificates issued by the test live VALIDITY_MS; the server renews when less than
 * RENEW_BEFORE_MS is left by its clock. The test moves that clock JUMP_MS ahead when it wants the
 * rotation, so nothing depends on how long the steps before it take (with expiry by the real
 * clock, the server start and steps 1-2 had to fit in the seconds before renewal came due, however
 * loaded the machine). JUMP_MS stays under the minute issueCertificate
 * back-dates notBefore by, so what the server issues after the jump is valid by the real clock.
 */
const VALIDITY_MS = 50_000;
const RENEW_BEFORE_MS = 20_000;
const JUMP_MS = 40_000;

/** The certificate a fresh, fully verified TLS connection to the server gets. */
async function servedCertificate(port: number, ca: string): Promise<X509Certificate> {
  return await new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca }, () => {
      const der = s.getPeerCertificate().raw;
      s.end();
      resolve(new X509Certificate(der));
    });
    s.on('error', reject);
  });
}

/** A fake agent on loopback (serving a cluster-CA certificate, as the proxy verifies) that records the client certificate each request presents. */
async function startFakeAgent(ca: LoadedCa): Promise<{ port: number; serials: string[]; close(): Promise<void> }> {
  const serials: string[] = [];
  const { keyPem, certPem } = await issueCertificate(ca, { commonName: 'system:node:n1', usage: 'server', ips: ['127.0.0.1'] });
  const server = https.createServer({ key: keyPem, cert: certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    serials.push((req.socket as TLSSocket).getPeerCertificate().serialNumber);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('log line\n');
  });
  // Idle connections stay open as long as the server's keep-alive pool would keep them (kubelet's
  // server idles out after minutes): a connection dialled before rotation is still there after it.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    serials,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('serving and agent-client certificates rotate in a running server without dropping connections', async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-rotation-it-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const pkiDir = join(dir, 'pki');

  // 1. A PKI whose two leaf pairs expire in VALIDITY_MS (same SANs the server wants, so only expiry
  //    triggers), and a server whose clock the test can move.
  const pki = await ensurePki({ dir: pkiDir });
  const ca = await loadCa({ certPem: pki.caPem, keyPem: await readFile(join(pkiDir, 'ca.key'), 'utf8') });
  const days = VALIDITY_MS / 86_400_000;
  // issueCertificate back-dates notBefore by a minute; notAfter is now + VALIDITY_MS.
  const shortServing = await issueCertificate(ca, { commonName: 'nodelet-apiserver', usage: 'server', ips: [...hostAddresses(), '10.96.0.1'], dnsNames: ['localhost', hostname(), ...KUBERNETES_SERVICE_NAMES], days });
  const shortClient = await issueCertificate(ca, { commonName: AGENT_CLIENT_USER, usage: 'client', days });
  await writePairAtomic(pkiDir, 'apiserver', shortServing);
  await writePairAtomic(pkiDir, 'apiserver-kubelet-client', shortClient);
  let skewMs = 0;

  const cp = await startControlPlane({
    dataDir: dir,
    bindAddress: '127.0.0.1',
    port: 0,
    registryAddress: '',
    controllers: false,
    logger: noopLogger,
    now: () => Date.now() + skewMs,
    certRotation: { intervalMs: 200, renewBeforeMs: RENEW_BEFORE_MS },
  });
  cleanup(() => cp.close());
  const oldSerial = new X509Certificate(shortServing.certPem).serialNumber;
  assert.equal((await servedCertificate(cp.port, cp.caPem)).serialNumber, oldSerial, 'the server started with the short-lived certificate');

  const client = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanup(() => client.close());
  const agent = await startFakeAgent(ca);
  cleanup(() => agent.close());
  await client.resource(NODES).create({
    metadata: { name: 'n1' },
    status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: agent.port } } },
  });
  await client.resource(PODS, 'default').create({ metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1' }] } });
  const podLog = async (): Promise<string> => (await client.getRaw('/api/v1/namespaces/default/pods/p/log')).toString();

  // 2. Before rotation: a watch on its own connection, and one proxied log request.
  const events: string[] = [];
  const watchRes = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = https.get(`${cp.url}/api/v1/namespaces/default/configmaps?watch=1`, { ca: cp.caPem, agent: false, headers: { Authorization: `Bearer ${cp.adminToken}` } }, resolve);
    req.on('error', reject);
  });
  cleanup(() => watchRes.destroy());
  assert.equal(watchRes.statusCode, 200);
  let buffered = '';
  watchRes.on('data', (c: Buffer) => {
    buffered += c.toString();
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      events.push(buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
    }
  });
  const watchSocket = watchRes.socket as TLSSocket;
  assert.equal(watchSocket.getPeerCertificate().serialNumber, oldSerial);
  assert.equal(await podLog(), 'log line\n');
  const oldClientSerial = new X509Certificate(shortClient.certPem).serialNumber;
  assert.deepEqual(agent.serials, [oldClientSerial]);

  // 3. Rotation, once the server's clock says both pairs are due: a new connection gets a new,
  //    CA-verified certificate valid far longer.
  skewMs = JUMP_MS;
  const renewed = await pollUntil(
    'the server to serve a rotated certificate',
    async () => {
      const c = await servedCertificate(cp.port, cp.caPem);
      return c.serialNumber !== oldSerial ? c : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  assert.ok(Date.parse(renewed.validTo) > Date.now() + 300 * 86_400_000, `new certificate valid until ${renewed.validTo}`);
  assert.equal(new X509Certificate(await readFile(join(pkiDir, 'apiserver.crt'), 'utf8')).serialNumber, renewed.serialNumber, 'written to disk too');

  // 4. The watch opened before rotation still streams, on the same connection and certificate.
  await client.resource(CONFIGMAPS, 'default').create({ metadata: { name: 'after-rotation', namespace: 'default' }, data: { k: 'v' } });
  await pollUntil('the old watch to see the new ConfigMap', () => events.some((e) => e.includes('"after-rotation"')), { timeoutMs: 10_000, intervalMs: 20 });
  assert.equal(watchRes.socket, watchSocket);
  assert.equal(watchSocket.destroyed, false);
  assert.equal(watchSocket.getPeerCertificate().serialNumber, oldSerial);

  // 5. The node proxy presents the rotated client pair to agents (due at the same check, or the next).
  await pollUntil('the node proxy to present a rotated client certificate', async () => (await podLog()) === 'log line\n' && agent.serials.at(-1) !== oldClientSerial, { timeoutMs: 10_000, intervalMs: 200 });
  const newClientSerial = new X509Certificate(await readFile(join(pkiDir, 'apiserver-kubelet-client.crt'), 'utf8')).serialNumber;
  assert.equal(agent.serials.at(-1), newClientSerial, 'the pair on disk is the one presented');
});
