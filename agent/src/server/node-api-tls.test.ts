// setServingCertificate: a rotated serving certificate reaches new TLS connections while open
// ones keep theirs and go on working (real sockets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import tls from 'node:tls';
import { generateKeyAndCsr } from '@nodelet/api';
import { noopLogger } from '@nodelet/base';
import { createTestCa } from '../testing/test-ca.js';
import { startNodeApi, type NodeApiBackend } from './node-api.js';
import type { NodeApiAuthenticator } from './authn.js';
import type { NodeApiAuthorizer } from './authz.js';

test('setServingCertificate: new connections get the new certificate, an open keep-alive connection keeps working', async (t) => {
  const ca = await createTestCa();
  const pair = async (): Promise<{ cert: string; key: string }> => {
    const { keyPem, csrPem } = await generateKeyAndCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ips: ['127.0.0.1'] });
    return { key: keyPem, cert: await ca.sign(csrPem, Date.now() - 60_000, Date.now() + 3600_000) };
  };
  const first = await pair();
  const second = await pair();
  const api = await startNodeApi({
    address: '127.0.0.1', port: 0, healthzAddress: '127.0.0.1', healthzPort: 0, cert: first,
    authn: { authenticate: async () => ({ ok: true, user: 'test', groups: [] }) } as unknown as NodeApiAuthenticator,
    authz: { authorize: async () => ({ allowed: true }) } as unknown as NodeApiAuthorizer,
    backend: { healthy: () => true } as unknown as NodeApiBackend,
    log: noopLogger,
  });
  t.after(() => api.close());
  const serial = (pem: string): string => new X509Certificate(pem).serialNumber;
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: ca.certPem });
  t.after(() => agent.destroy());
  const get = (a: https.Agent | false): Promise<{ body: string; serial: string; socket: tls.TLSSocket }> =>
    new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: api.port, path: '/healthz', agent: a, ...(a ? {} : { ca: ca.certPem }) }, (res) => {
        const socket = res.socket as tls.TLSSocket;
        const peer = socket.getPeerCertificate().serialNumber;
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ body, serial: peer, socket }));
      }).on('error', reject);
    });

  const before = await get(agent);
  assert.equal(before.body, 'ok');
  assert.equal(before.serial, serial(first.cert), 'verified against the CA, for 127.0.0.1');
  api.setServingCertificate(second.cert, second.key);
  const fresh = await get(false);
  assert.equal(fresh.serial, serial(second.cert), 'a new connection gets the rotated certificate');
  const reused = await get(agent);
  assert.equal(reused.socket, before.socket, 'the keep-alive connection was not dropped');
  assert.equal(reused.body, 'ok');
  assert.equal(reused.serial, serial(first.cert));
});
