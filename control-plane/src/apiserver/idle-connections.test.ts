// Idle keep-alive connections between an agent and the API server: the agent renews its node
// Lease every 10 s (a 40 s lease, renewed every quarter), and each renewal must reuse the TLS
// connection of the one before instead of paying a fresh handshake on both ends. A real API
// server over TLS (port 0, SQLite) and the client the agent uses (undici transport, protobuf).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { delay, pollUntil } from '@nodelet/base';
import { ApiClient, CONFIGMAPS, LEASES, type Lease } from '@nodelet/api';
import { createCa, issueCertificate, loadCa } from '../pki/certs.js';
import { startTestApiServer } from './testing/test-server.js';

/** The agent's renew period for its default 40 s lease (agent/src/node/lease.ts). */
const RENEW_INTERVAL_MS = 10_000;

async function tlsServer(t: { after(fn: () => unknown): void }) {
  const ca = await createCa('idle-ca');
  const serving = await issueCertificate(await loadCa(ca), { commonName: 'apiserver', usage: 'server', ips: ['127.0.0.1'] });
  const srv = await startTestApiServer({ tls: { cert: serving.certPem, key: serving.keyPem }, caPem: ca.certPem });
  t.after(() => srv.close());
  const port = Number(new URL(srv.url).port);
  const api = new ApiClient({ server: srv.url, token: srv.token, ca: ca.certPem, protobuf: true });
  t.after(() => api.close());
  /** Connections to this server undici established (TCP connected, TLS handshake done) and closed so far. */
  const counts = { connected: 0, closed: 0 };
  const onConnected = (m: unknown): void => {
    const { connectParams, socket } = m as { connectParams: { port: string | number }; socket: Socket };
    if (Number(connectParams.port) !== port) return;
    counts.connected++;
    socket.once('close', () => counts.closed++);
  };
  diagnostics.subscribe('undici:client:connected', onConnected);
  t.after(() => diagnostics.unsubscribe('undici:client:connected', onConnected));
  return { api, counts };
}

// Each case waits out real idle periods (20 s and about 15 s); one after the other they came close to
// the runner's 60 s bound on a whole file under load, so they run side by side (each has its own
// server, and counts only the connections to its own port).
describe('idle keep-alive connections to the API server', { concurrency: true }, () => {
  it('an agent renewing its Lease every 10 s keeps one TLS connection to the API server', async (t) => {
    const { api, counts } = await tlsServer(t);
    let lease = await api.create(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'n1', namespace: 'kube-node-lease' },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: new Date().toISOString() },
    } satisfies Lease, { namespace: 'kube-node-lease' });
    assert.equal(counts.connected, 1, 'the first request opened one connection');

    for (let i = 1; i <= 2; i++) {
      // The connection sitting idle for a renew period is what this test is about: no condition to await.
      await delay(RENEW_INTERVAL_MS);
      lease = await api.update(LEASES, { ...lease, spec: { ...lease.spec, renewTime: new Date().toISOString() } }, { namespace: 'kube-node-lease' });
    }
    assert.deepEqual(counts, { connected: 1, closed: 0 }, `two renewals ${RENEW_INTERVAL_MS / 1000} s apart reused the first connection`);
  });

  it('the connections a burst of requests opened are closed by the client within 15 s of idling, not kept for the server\'s 90 s', async (t) => {
    const { api, counts } = await tlsServer(t);
    await Promise.all(Array.from({ length: 8 }, () => api.list(CONFIGMAPS, { namespace: 'default' })));
    const opened = counts.connected;
    assert.ok(opened > 1, `the burst opened ${opened} connections`);
    const idleSince = Date.now();
    await pollUntil('the burst\'s idle connections to be closed', () => counts.closed === opened, { timeoutMs: 25_000, intervalMs: 100 });
    const idleMs = Date.now() - idleSince;
    assert.ok(idleMs >= RENEW_INTERVAL_MS, `closed after ${idleMs} ms idle, before the agent's renew period`);
  });
});
