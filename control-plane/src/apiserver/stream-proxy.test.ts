// pods/exec|attach|portforward upgrades through the API server to a stand-in agent (TLS, on
// loopback) that answers SPDY upgrades with 101 and then echoes bytes: SPDY is spliced with its
// method and every X-Stream-Protocol-Version line; kubectl's SPDY-in-WebSocket port-forward tunnel
// is unwrapped into a plain SPDY upgrade; the agent's refusal reaches the client as it came.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createCa, issueCertificate, loadCa } from '../pki/certs.js';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer, type TestReply } from './testing/test-server.js';

describe('stream subresources through the node proxy', () => {
  let srv: TestApiServer;
  let agent: https.Server;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headersDistinct'] }> = [];

  const call = (method: string, path: string, body?: unknown): Promise<TestReply> => srv.call(method, path, body);

  before(async () => {
    const ca = await loadCa(await createCa('test-ca'));
    const serving = await issueCertificate(ca, { commonName: 'node-1', usage: 'server', ips: ['127.0.0.1'] });
    agent = https.createServer({ cert: serving.certPem, key: serving.keyPem });
    agent.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headersDistinct });
      if (req.url?.startsWith('/portForward/default/refused')) {
        const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 403, reason: 'Forbidden', message: 'no' });
        socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        return;
      }
      const chosen = req.headersDistinct['x-stream-protocol-version']?.[0] ?? '';
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${chosen}\r\n\r\n`);
      socket.pipe(socket); // "SPDY" frames echoed
    });
    await new Promise<void>((r) => agent.listen(0, '127.0.0.1', () => r()));
    srv = await startTestApiServer();
    const port = (agent.address() as AddressInfo).port;
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
    assert.equal((await call('POST', '/api/v1/nodes', node)).status, 201);
    for (const name of ['p', 'refused']) {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] } };
      assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    }
  });
  after(async () => {
    agent.closeAllConnections();
    await new Promise((r) => agent.close(r));
    await srv.close();
  });

  it('SPDY exec is spliced with its method and every offered protocol', async () => {
    const sock = connect(Number(new URL(srv.url).port), '127.0.0.1');
    const head = [
      'POST /api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true HTTP/1.1',
      'Host: x',
      `Authorization: Bearer ${TOKEN}`,
      'Connection: Upgrade',
      'Upgrade: SPDY/3.1',
      'X-Stream-Protocol-Version: v4.channel.k8s.io',
      'X-Stream-Protocol-Version: v3.channel.k8s.io',
    ];
    sock.write(`${head.join('\r\n')}\r\n\r\n`);
    let got = '';
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n') && !got.includes('frames')) sock.write('frames');
    });
    await new Promise<void>((resolve) => sock.on('data', () => got.endsWith('frames') && resolve()));
    sock.destroy();
    assert.match(got, /^HTTP\/1\.1 101 /);
    assert.match(got, /X-Stream-Protocol-Version: v4\.channel\.k8s\.io/);
    const hit = seen.find((s) => s.url.startsWith('/exec/'))!;
    assert.equal(hit.method, 'POST');
    assert.equal(hit.url, '/exec/default/p/c?command=ls&stdout=true');
    assert.deepEqual(hit.headers['x-stream-protocol-version'], ['v4.channel.k8s.io', 'v3.channel.k8s.io']);
  });

  /**
   * A WebSocket handshake offering kubectl's tunnel subprotocol, written by hand: `ws` (client and
   * server) only takes RFC 7230 tokens, and `SPDY/3.1+portforward.k8s.io` has a '/'.
   */
  async function tunnel(path: string): Promise<{ sock: Socket; head: string }> {
    const sock = connect(Number(new URL(srv.url).port), '127.0.0.1');
    const lines = [
      `GET ${path} HTTP/1.1`, 'Host: x', `Authorization: Bearer ${TOKEN}`, 'Connection: Upgrade', 'Upgrade: websocket',
      'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io',
    ];
    sock.write(`${lines.join('\r\n')}\r\n\r\n`);
    let buf = '';
    const head = await new Promise<string>((resolve) => {
      const onData = (d: Buffer): void => {
        buf += d.toString('latin1');
        if (!buf.includes('\r\n\r\n')) return;
        sock.off('data', onData);
        resolve(buf);
      };
      sock.on('data', onData);
    });
    return { sock, head };
  }

  it("kubectl's port-forward tunnel: a plain SPDY upgrade toward the agent, binary messages both ways", async () => {
    const { sock, head } = await tunnel('/api/v1/namespaces/default/pods/p/portforward');
    assert.match(head, /^HTTP\/1\.1 101 /);
    assert.match(head, /\r\nSec-WebSocket-Protocol: SPDY\/3\.1\+portforward\.k8s\.io\r\n/);
    // One masked binary frame out; the echo comes back as one unmasked binary frame.
    const payload = Buffer.from('spdy bytes');
    const mask = Buffer.from([1, 2, 3, 4]);
    sock.write(Buffer.concat([Buffer.from([0x82, 0x80 | payload.length]), mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))]));
    const frame = await new Promise<Buffer>((resolve) => sock.once('data', resolve));
    sock.destroy();
    assert.deepEqual([frame[0], frame[1], frame.subarray(2).toString()], [0x82, payload.length, 'spdy bytes']);
    const hit = seen.find((s) => s.url.startsWith('/portForward/default/p'))!;
    assert.equal(hit.method, 'POST');
    assert.deepEqual(hit.headers.upgrade, ['SPDY/3.1']);
    assert.deepEqual(hit.headers['x-stream-protocol-version'], ['portforward.k8s.io']);
    assert.equal(hit.headers['sec-websocket-key'], undefined);
  });

  it("the agent's refusal of a tunnelled port-forward reaches the client; no upgrade means 400", async () => {
    const { sock, head } = await tunnel('/api/v1/namespaces/default/pods/refused/portforward?ports=80');
    sock.destroy();
    assert.match(head, /^HTTP\/1\.1 403 Forbidden/);
    assert.equal(seen.find((s) => s.url.startsWith('/portForward/default/refused'))?.url, '/portForward/default/refused?port=80');
    const plain = await call('GET', '/api/v1/namespaces/default/pods/p/attach');
    assert.deepEqual([plain.status, plain.json.message], [400, 'Upgrade request required']);
  });
});
