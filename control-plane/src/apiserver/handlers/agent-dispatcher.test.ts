import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { pollUntil } from '@nodelet/base';
import { createCa, issueCertificate, loadCa } from '../../pki/certs.js';
import { agentDispatcher, agentOrigin } from './agent-dispatcher.js';

test('new TLS material gives a new pool; a request in flight on the old one finishes, then its sockets close', async (t) => {
  const ca = await loadCa(await createCa('test-ca'));
  const serving = await issueCertificate(ca, { commonName: 'agent', usage: 'server', ips: ['127.0.0.1'] });
  const [first, second] = [
    await issueCertificate(ca, { commonName: 'client-1', usage: 'client' }),
    await issueCertificate(ca, { commonName: 'client-2', usage: 'client' }),
  ];
  // An agent that records who each request came from; /slow holds its reply until released.
  const seen: string[] = [];
  let release: ((res: ServerResponse) => void) | undefined;
  const held = new Promise<ServerResponse>((resolve) => (release = resolve));
  const server = https.createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    seen.push(String((req.socket as TLSSocket).getPeerCertificate().subject.CN));
    res.writeHead(200);
    if (req.url === '/slow') {
      res.write('start;');
      release!(res);
    } else res.end('ok');
  });
  server.keepAliveTimeout = 120_000; // the pool, not the agent, must be what retires old connections
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets: { cn: string; socket: TLSSocket }[] = [];
  server.on('secureConnection', (socket: TLSSocket) => sockets.push({ cn: String(socket.getPeerCertificate().subject.CN), socket }));
  const shutdown = new AbortController();
  t.after(() => {
    shutdown.abort();
    server.closeAllConnections();
    server.close();
  });
  const origin = agentOrigin('127.0.0.1', (server.address() as { port: number }).port);
  let pair = first;
  const material = () => ({ cert: pair.certPem, key: pair.keyPem, ca: ca.certPem, rejectUnauthorized: true });

  const a = agentDispatcher(shutdown.signal, material);
  assert.equal(await (await a.request({ origin, path: '/', method: 'GET' })).body.text(), 'ok');
  assert.equal(agentDispatcher(shutdown.signal, material), a, 'the same material reuses the pool');
  const slow = await a.request({ origin, path: '/slow', method: 'GET' });
  const res = await held;

  pair = second;
  const b = agentDispatcher(shutdown.signal, material);
  assert.notEqual(b, a);
  assert.equal(await (await b.request({ origin, path: '/', method: 'GET' })).body.text(), 'ok');
  res.end('end');
  assert.equal(await slow.body.text(), 'start;end', 'the request in flight on the old pool finished');
  assert.deepEqual(seen, ['client-1', 'client-1', 'client-2']);
  // The old pool closed its connections once its request was done; the new one keeps its own.
  await pollUntil('the old pool to close its connections', () => sockets.filter((x) => x.cn === 'client-1').every((x) => x.socket.closed), { timeoutMs: 5_000, intervalMs: 10 });
  assert.ok(sockets.some((x) => x.cn === 'client-2' && !x.socket.closed));
});
