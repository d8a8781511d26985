// Security item "in-flight slots leak" (docs/security.md): clients that declare a body and stop
// sending it must not keep in-flight slots past the request timeout. A real API server over TLS
// (port 0, SQLite), a real service-account JWT without bindings as the attacker, and a node
// identity by client certificate whose Lease renewal must go through once the attack timed out.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { rawExchange, stalledUpload, type RawTarget, type StalledUpload } from '@nodelet/api/testing';
import { createCa, issueCertificate, loadCa, type KeyPairPem } from '../pki/certs.js';
import { ensureServiceAccountKey } from './auth/serviceaccount/signing-key.js';
import { ServiceAccountTokens } from './auth/serviceaccount/tokens.js';
import type { ApiServer } from './server.js';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

const ADMIN = 'slow-body-admin-token';
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1';
const TIMEOUT_MS = 2000;

const request = (method: string, path: string, headers: string[], body?: string): string =>
  [`${method} ${path} HTTP/1.1`, 'Host: x', ...headers, ...(body !== undefined ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : []), 'Connection: close', '', body ?? ''].join('\r\n');

const lease = (renewTime: string, resourceVersion?: string): string =>
  JSON.stringify({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'n1', namespace: 'kube-node-lease', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime },
  });

/** A SelfSubjectAccessReview over TLS declaring 1000 bytes of body, of which it sends 9. */
const slowReview = (target: RawTarget, token: string): StalledUpload =>
  stalledUpload(target, `POST ${SSAR} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`, '{"kind":');

describe('a request body that stalls', () => {
  let srv: TestApiServer;
  let server: ApiServer;
  let dir: string;
  let ca: KeyPairPem;
  let admin: RawTarget;
  let node: RawTarget;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-slow-body-'));
    ca = await createCa('slow-body-ca');
    const loaded = await loadCa(ca);
    const serving = await issueCertificate(loaded, { commonName: 'apiserver', usage: 'server', ips: ['127.0.0.1'] });
    const nodeCert = await issueCertificate(loaded, { commonName: 'system:node:n1', organization: 'system:nodes', usage: 'client' });
    srv = await startTestApiServer({
      tokens: new Map([[ADMIN, { name: 'admin', groups: ['system:masters', 'system:authenticated'] }]]),
      tls: { cert: serving.certPem, key: serving.keyPem },
      caPem: ca.certPem,
      serviceAccountTokens: new ServiceAccountTokens({ issuer: ISSUER, audiences: [ISSUER], key: await ensureServiceAccountKey(dir) }),
      limits: { maxMutatingRequestsInflight: 2, requestTimeoutMs: TIMEOUT_MS },
    });
    server = srv.server;
    const port = Number(new URL(srv.url).port);
    admin = { host: '127.0.0.1', port, tls: { ca: ca.certPem } };
    node = { host: '127.0.0.1', port, tls: { ca: ca.certPem, cert: nodeCert.certPem, key: nodeCert.keyPem } };
  });
  after(async () => {
    await srv?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('times out, frees its in-flight slot and is closed; a node renews its Lease within a second', async (t) => {
    // The node's Lease exists (its agent created it at registration).
    const created = await rawExchange(node, [request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', [], lease(new Date().toISOString()))]);
    assert.equal(created.status, 201, created.body);
    // The attacker: the default service account of "default", which no binding names.
    const tr = await rawExchange(admin, [request('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', [`Authorization: Bearer ${ADMIN}`], '{"spec":{}}')]);
    assert.equal(tr.status, 201, tr.body);
    const saToken = (JSON.parse(tr.body) as { status: { token: string } }).status.token;
    const denied = await rawExchange(admin, [request('GET', '/api/v1/namespaces/default/configmaps', [`Authorization: Bearer ${saToken}`])]);
    assert.equal(denied.status, 403, `the service account has no bindings: ${denied.body}`);

    // Read before the attack: the slots are held only until the request timeout, so the one request
    // that must land inside that window is the renewal itself.
    const leaseBefore = await rawExchange(node, [request('GET', LEASE, [])]);
    assert.equal(leaseBefore.status, 200, leaseBefore.body);
    const beforeRv = (JSON.parse(leaseBefore.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const uploads = [slowReview(admin, saToken), slowReview(admin, saToken)];
    t.after(() => uploads.forEach((u) => u.socket.destroy()));
    const started = Date.now();
    await pollUntil('both uploads to hold a mutating slot', async () => server.inflight().mutating === 2, { timeoutMs: 5000, intervalMs: 10 });
    // While they hold the pool, the node is refused (what the attack achieves for its duration).
    const refused = await rawExchange(node, [request('PUT', LEASE, [], lease(new Date().toISOString(), beforeRv))]);
    assert.equal(refused.status, 429, refused.body);

    // Each resolves when the connection closes, which the test never does: the server closed it.
    const replies = await Promise.all(uploads.map((u) => u.closed));
    const elapsed = Date.now() - started;
    for (const r of replies) {
      assert.match(r, /^HTTP\/1\.1 504 /, r);
      assert.match(r, /"reason":"Timeout"/);
    }
    assert.ok(elapsed >= TIMEOUT_MS - 100 && elapsed < TIMEOUT_MS + 3000, `answered after ${elapsed} ms`);
    // Freed when the 504 went out, which is before the client saw the close.
    assert.deepEqual(server.inflight(), { readOnly: 0, mutating: 0 }, 'every slot is free once the uploads timed out');

    // The node's next renewal goes through at once.
    const cur = await rawExchange(node, [request('GET', LEASE, [])]);
    assert.equal(cur.status, 200, cur.body);
    const rv = (JSON.parse(cur.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const renewStarted = Date.now();
    const renewed = await rawExchange(node, [request('PUT', LEASE, [], lease(new Date().toISOString(), rv))]);
    const renewMs = Date.now() - renewStarted;
    assert.equal(renewed.status, 200, renewed.body);
    assert.ok(renewMs < 1000, `the renewal took ${renewMs} ms`);
    // And the attacker's own writes are not locked out either.
    const review = await rawExchange(admin, [request('POST', SSAR, [`Authorization: Bearer ${saToken}`], JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } }))]);
    assert.equal(review.status, 201, review.body);
    assert.deepEqual(server.inflight(), { readOnly: 0, mutating: 0 });
  });
});
