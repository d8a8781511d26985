// HTTPS against a real node:https server: CA verification, client certificates (mTLS),
// insecure-skip-tls-verify and the message when verification fails. Certificates come from the
// openssl CLI (skipped with a reason when it is absent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { hasCode } from '@nodelet/base';
import { ApiClient } from './api-client.js';
import { edgeServerOptions, DEFAULT_EDGE_LIMITS } from '../serving/index.js';
import { NODES } from '../types/resources.js';
import { cleanups } from '@nodelet/base/testing';

const OPENSSL = ['/usr/bin/openssl', '/bin/openssl'].find((p) => existsSync(p));

interface Pki {
  ca: Buffer;
  serverCert: Buffer;
  serverKey: Buffer;
  clientCert: Buffer;
  clientKey: Buffer;
}

async function makePki(dir: string): Promise<Pki> {
  const ssl = (...args: string[]): void => void execFileSync(OPENSSL as string, args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=test-ca');
  for (const [name, ext] of [['server', 'subjectAltName=IP:127.0.0.1'], ['client', 'extendedKeyUsage=clientAuth']] as const) {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}/O=system:masters`);
    await writeFile(join(dir, `${name}.ext`), `${ext}\n`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  }
  const r = (f: string): Promise<Buffer> => readFile(join(dir, f));
  return { ca: await r('ca.crt'), serverCert: await r('server.crt'), serverKey: await r('server.key'), clientCert: await r('client.crt'), clientKey: await r('client.key') };
}

test('https: CA verification, mTLS, insecure skip and a clear verification error', { skip: OPENSSL ? false : 'openssl CLI not installed' }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-tls-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const pki = await makePki(dir);
  const seen: Array<{ cn?: string; auth?: string }> = [];
  const srv = https.createServer({ cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    seen.push({ cn: peer?.subject?.CN as string | undefined, auth: req.headers.authorization });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1' } }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanup(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const server = `https://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const clients: ApiClient[] = [];
  const client = (o: Partial<ConstructorParameters<typeof ApiClient>[0]>): ApiClient => {
    const c = new ApiClient({ server, ...o });
    clients.push(c);
    return c;
  };
  cleanup(() => clients.forEach((c) => c.close()));

  assert.equal((await client({ ca: pki.ca, token: 't0k' }).get(NODES, 'n1')).metadata.name, 'n1');
  assert.deepEqual(seen.at(-1), { cn: undefined, auth: 'Bearer t0k' });

  await client({ ca: pki.ca, cert: pki.clientCert, key: pki.clientKey }).get(NODES, 'n1');
  assert.equal(seen.at(-1)?.cn, 'client', 'client certificate presented');

  await client({ insecureSkipTlsVerify: true }).get(NODES, 'n1');

  await assert.rejects(client({}).get(NODES, 'n1'), (e) => {
    assert.ok(hasCode(e, 'ERR_FAILED_PRECONDITION'));
    assert.equal((e as { retryable: boolean }).retryable, false);
    assert.match((e as Error).message, /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)/);
    assert.match((e as Error).message, /certificate-authority/);
    return true;
  });
});

test('https: one TLS context for every connection of a client', { skip: OPENSSL ? false : 'openssl CLI not installed' }, async (t) => {
  const cleanup = cleanups(t);
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-tls-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const pki = await makePki(dir);
  const srv = https.createServer({ cert: pki.serverCert, key: pki.serverKey, ...edgeServerOptions(DEFAULT_EDGE_LIMITS) }, (_req, res) => {
    // Every reply closes its connection, so each request below needs a new one.
    res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' });
    res.end(JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1' } }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanup(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const contexts = t.mock.method(tls, 'createSecureContext');
  const client = new ApiClient({ server: `https://127.0.0.1:${(srv.address() as AddressInfo).port}`, ca: pki.ca, cert: pki.clientCert, key: pki.clientKey });
  cleanup(() => client.close());
  for (let i = 0; i < 3; i++) await client.get(NODES, 'n1');
  assert.equal(contexts.mock.callCount(), 1, 'the CA and client pair are parsed once, not per connection');
});
