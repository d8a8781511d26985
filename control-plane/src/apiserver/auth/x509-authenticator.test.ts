// Client-certificate users on a real HTTPS API server: worked out once per TLS connection (not
// per request), each connection with its own certificate's user, and renegotiation (which could
// change the certificate under a connection) refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { createCa, issueCertificate, loadCa, type KeyPairPem } from '../../pki/certs.js';
import { startTestApiServer, type TestApiServer } from '../testing/test-server.js';

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

describe('client certificate users', () => {
  let srv: TestApiServer;
  let port: number;
  let caPem: string;
  let alice: KeyPairPem;
  let bob: KeyPairPem;
  /** Server-side `getPeerCertificate` calls, by the client's port (one per connection). */
  const peerCertificateCalls = new Map<number, number>();
  const original = tls.TLSSocket.prototype.getPeerCertificate;

  before(async () => {
    const ca = await loadCa(await createCa('x509-test-ca'));
    caPem = ca.certPem;
    const serving = await issueCertificate(ca, { commonName: 'apiserver', usage: 'server', ips: ['127.0.0.1'] });
    alice = await issueCertificate(ca, { commonName: 'alice', organization: 'devs', usage: 'client' });
    bob = await issueCertificate(ca, { commonName: 'bob', organization: 'ops', usage: 'client' });
    srv = await startTestApiServer({ tls: { cert: serving.certPem, key: serving.keyPem }, caPem });
    port = Number(new URL(srv.url).port);
    tls.TLSSocket.prototype.getPeerCertificate = function counted(this: tls.TLSSocket, detailed?: boolean) {
      if (this.localPort === port) peerCertificateCalls.set(this.remotePort!, (peerCertificateCalls.get(this.remotePort!) ?? 0) + 1);
      return original.call(this, detailed as true);
    } as typeof original;
  });
  after(async () => {
    tls.TLSSocket.prototype.getPeerCertificate = original;
    await srv?.close();
  });

  /** A client that keeps one connection with `pair`'s certificate. */
  function client(pair: KeyPairPem): { whoami(): Promise<{ user: { username: string; groups: string[] }; clientPort: number }>; close(): void } {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: caPem, cert: pair.certPem, key: pair.keyPem });
    return {
      whoami: () =>
        new Promise((resolve, reject) => {
          const req = https.request(`${srv.url}${WHOAMI}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
            const clientPort = res.socket.localPort!;
            let text = '';
            res.on('data', (c: Buffer) => (text += String(c)));
            res.on('end', () => {
              if (res.statusCode !== 201) return reject(new Error(`${res.statusCode}: ${text}`));
              resolve({ user: JSON.parse(text).status.userInfo, clientPort });
            });
          });
          req.on('error', reject);
          req.end('{}');
        }),
      close: () => agent.destroy(),
    };
  }

  it('reads the certificate once per connection, and a second connection gets its own user', async () => {
    const a = client(alice);
    const b = client(bob);
    try {
      const first = await a.whoami();
      assert.deepEqual(first.user, { username: 'alice', groups: ['devs', 'system:authenticated'] });
      for (let i = 0; i < 3; i++) {
        const again = await a.whoami();
        assert.equal(again.clientPort, first.clientPort, 'the same keep-alive connection');
        assert.equal(again.user.username, 'alice');
      }
      assert.equal(peerCertificateCalls.get(first.clientPort), 1, 'four requests on one connection read its certificate once');

      const other = await b.whoami();
      assert.notEqual(other.clientPort, first.clientPort);
      assert.deepEqual(other.user, { username: 'bob', groups: ['ops', 'system:authenticated'] });
      assert.equal((await b.whoami()).user.username, 'bob');
      assert.equal(peerCertificateCalls.get(other.clientPort), 1);
      assert.equal((await a.whoami()).user.username, 'alice', "alice's connection keeps alice");
    } finally {
      a.close();
      b.close();
    }
  });

  it('closes a connection whose client starts a TLS renegotiation', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem, cert: alice.certPem, key: alice.keyPem, maxVersion: 'TLSv1.2' });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', resolve);
        socket.once('error', reject);
      });
      socket.on('error', () => undefined); // the server's close may surface as a reset
      socket.resume();
      const outcome = await new Promise<string>((resolve) => {
        socket.once('close', () => resolve('closed'));
        const started = socket.renegotiate({ rejectUnauthorized: true }, (err) => resolve(err ? 'closed' : 'renegotiated'));
        if (!started) resolve('not started');
      });
      assert.equal(outcome, 'closed');
    } finally {
      socket.destroy();
    }
    // The server goes on serving: a new connection with the same certificate is alice again.
    const again = client(alice);
    try {
      assert.equal((await again.whoami()).user.username, 'alice');
    } finally {
      again.close();
    }
  });
});
