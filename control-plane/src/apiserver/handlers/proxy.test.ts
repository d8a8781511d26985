// pods/proxy and services/proxy through the real API server (plain HTTP on port 0, SQLite), to a
// small HTTP server on this machine's own non-loopback address standing in for a pod.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { hostAddresses } from '../../pki/pki.js';
import { startTestApiServer, type TestApiServer, type TestReply } from '../testing/test-server.js';
import { startTestWebhookServer } from '../testing/webhook-server.js';
import { pollUntil } from '@nodelet/base';
import { isGlobalUnicast } from './proxy-target.js';
import { splitSchemeNamePort } from './proxy-location.js';
import { rewriteHtml, rewriteProxyUrl } from './proxy-rewrite.js';
import { gzipSync } from 'node:zlib';

const PAGE = '<html><body><a href="/docs/?a=1#top">d</a> <img src=/i.png> <a href=\'rel\'>r</a> <a title="/x" href="http://elsewhere/x">e</a></body></html>';

const USER = 'user-token';
const HOST_IP = hostAddresses().find((a) => a.includes('.') && isGlobalUnicast(a));

describe('splitSchemeNamePort', () => {
  it('splits name, name:port and scheme:name:port as upstream; refuses the rest', () => {
    assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
    assert.deepEqual(splitSchemeNamePort('web:80'), { scheme: '', name: 'web', port: '80' });
    assert.deepEqual(splitSchemeNamePort('web:http'), { scheme: '', name: 'web', port: 'http' });
    assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
    assert.deepEqual(splitSchemeNamePort(':web:'), { scheme: '', name: 'web', port: '' });
    assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
    assert.equal(splitSchemeNamePort(':80'), undefined);
    assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
  });
});

describe('rewriteProxyUrl and rewriteHtml', () => {
  const P = '/api/v1/namespaces/ns/services/web:80/proxy';
  it('puts paths on the target under the proxy path; leaves relative links, other hosts and prefixed paths', () => {
    assert.equal(rewriteProxyUrl('/x/?q=1#f', P, '10.0.0.5:8080'), `${P}/x/?q=1#f`);
    assert.equal(rewriteProxyUrl('http://10.0.0.5:8080/x', P, '10.0.0.5:8080'), `${P}/x`);
    assert.equal(rewriteProxyUrl('//10.0.0.5:8080', P, '10.0.0.5:8080'), `${P}/`);
    assert.equal(rewriteProxyUrl('http://other:8080/x', P, '10.0.0.5:8080'), 'http://other:8080/x');
    assert.equal(rewriteProxyUrl('x/y', P, '10.0.0.5:8080'), 'x/y');
    assert.equal(rewriteProxyUrl(`${P}/already`, P, '10.0.0.5:8080'), `${P}/already`);
  });
  it('rewrites the URL attributes of the tags that carry them, quoted or bare, and nothing else', () => {
    assert.equal(rewriteHtml(PAGE, P, 'h:1'),
      `<html><body><a href="${P}/docs/?a=1#top">d</a> <img src=${P}/i.png> <a href='rel'>r</a> <a title="/x" href="http://elsewhere/x">e</a></body></html>`);
    assert.equal(rewriteHtml('<p src="/x"><IMG SRC="/y">', P, 'h:1'), `<p src="/x"><IMG SRC="${P}/y">`);
  });
});

describe('pods/proxy and services/proxy', { skip: HOST_IP ? false : 'no global unicast IPv4 address on this machine' }, () => {
  let srv: TestApiServer;
  let target: http.Server;
  let port = 0;
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const call = (method: string, path: string, body?: unknown, token?: string): Promise<TestReply> => srv.call(method, path, body, { token });

  before(async () => {
    target = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.url === '/page' || req.url === '/gz') {
          const gz = req.url === '/gz';
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...(gz ? { 'Content-Encoding': 'gzip' } : {}) });
          return res.end(gz ? gzipSync(PAGE) : PAGE);
        }
        if (req.url === '/go') {
          res.writeHead(302, { Location: '/landed' });
          return res.end();
        }
        res.writeHead(201, { 'Content-Type': 'text/plain', 'X-Target': 'yes' });
        res.end(`${req.method} ${req.url} ${body}`);
      });
    });
    target.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\nX-Path: ${req.url}\r\nX-Auth: ${req.headers.authorization ?? 'none'}\r\n\r\n`);
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => target.listen(0, HOST_IP, resolve));
    port = (target.address() as AddressInfo).port;
    srv = await startTestApiServer({ tokens: new Map([[USER, { name: 'alice', groups: ['system:authenticated'] }]]) });
    const pod = (name: string, ip?: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: port }] }] }, ...(ip ? { status: { podIP: ip, podIPs: [{ ip }] } } : {}) });
    for (const [name, ip] of [['web', HOST_IP], ['noip', undefined]] as const) {
      assert.equal((await call('POST', '/api/v1/namespaces/default/pods', pod(name))).status, 201);
      if (ip) assert.equal((await srv.call('PATCH', `/api/v1/namespaces/default/pods/${name}/status`, { status: { podIP: ip, podIPs: [{ ip }] } }, { contentType: 'application/merge-patch+json' })).status, 200);
    }
    const svc = (name: string, portName: string) => ({ metadata: { name }, spec: { ports: [{ name: portName, port: 80, targetPort: port }] } });
    for (const name of ['websvc', 'empty', 'stale']) assert.equal((await call('POST', '/api/v1/namespaces/default/services', svc(name, name === 'websvc' ? 'http' : ''))).status, 201);
    const slice = (svcName: string, ip: string, podName: string, ready = true) => ({
      metadata: { name: `${svcName}-x`, labels: { 'kubernetes.io/service-name': svcName } }, addressType: 'IPv4',
      ports: [{ name: svcName === 'websvc' ? 'http' : '', port, protocol: 'TCP' }],
      endpoints: [{ addresses: [ip], conditions: { ready }, targetRef: { kind: 'Pod', namespace: 'default', name: podName } }],
    });
    assert.equal((await call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', slice('websvc', HOST_IP!, 'web'))).status, 201);
    // An endpoint whose pod does not hold the IP is never dialled (upstream's isValidAddress).
    assert.equal((await call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', slice('stale', '192.0.2.250', 'web'))).status, 201);
  });
  after(async () => {
    await srv?.close();
    await new Promise((resolve) => target?.close(resolve));
  });

  it('a pod proxy keeps method, path, trailing slash, query and body; credentials are not passed on', async () => {
    const r = await call('POST', `/api/v1/namespaces/default/pods/web:${port}/proxy/a/b/?x=1&y=2`, 'hello');
    assert.equal(r.status, 201);
    assert.equal(r.json, `POST /a/b/?x=1&y=2 hello`);
    assert.equal(r.headers.get('x-target'), 'yes');
    const last = seen.at(-1)!;
    assert.equal(last.headers.authorization, undefined);
    assert.ok(last.headers['x-forwarded-for']);
    // No port: the first declared container port.
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/web/proxy')).json, 'GET / ');
  });

  it('a redirect to a path on the pod stays behind the proxy', async () => {
    const res = await fetch(`${srv.url}/api/v1/namespaces/default/pods/web:${port}/proxy/go`, { headers: { Authorization: `Bearer ${srv.token}` }, redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `/api/v1/namespaces/default/pods/web:${port}/proxy/landed`);
  });

  it('HTML links to the pod (plain or gzip) come back under the proxy path, decoded', async () => {
    const prefix = `/api/v1/namespaces/default/pods/web:${port}/proxy`;
    for (const path of ['page', 'gz']) {
      const r = await call('GET', `${prefix}/${path}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-encoding'), null);
      assert.match(r.json, new RegExp(`<a href="${prefix}/docs/\\?a=1#top">`), path);
      assert.match(r.json, new RegExp(`<img src=${prefix}/i.png>`), path);
    }
    assert.equal(seen.at(-1)!.headers['x-forwarded-uri'], `${prefix}/gz`);
  });

  it('pod errors: malformed name 400, no pod 404, no IP 400 address not allowed, nothing listening 503', async () => {
    const bad = await call('GET', '/api/v1/namespaces/default/pods/a:b:c:d/proxy/');
    assert.deepEqual([bad.status, bad.json.message], [400, 'invalid pod request "a:b:c:d"']);
    const missing = await call('GET', '/api/v1/namespaces/default/pods/nope/proxy/');
    assert.deepEqual([missing.status, missing.json.message], [404, 'pods "nope" not found']);
    const noIp = await call('GET', '/api/v1/namespaces/default/pods/noip/proxy/');
    assert.deepEqual([noIp.status, noIp.json.message], [400, 'address not allowed']);
    const closed = await call('GET', `/api/v1/namespaces/default/pods/web:1/proxy/`);
    assert.equal(closed.status, 503);
    assert.match(closed.json.message, /^error trying to reach service: /);
    assert.equal(closed.headers.get('retry-after'), null);
  });

  it('a service proxy picks a ready endpoint by the numbered or named port', async () => {
    for (const id of ['websvc:80', 'websvc:http', 'http:websvc:http']) {
      const r = await call('GET', `/api/v1/namespaces/default/services/${id}/proxy/p?q=1`);
      assert.deepEqual([r.status, r.json], [201, 'GET /p?q=1 '], id);
    }
  });

  it('service errors: unknown port 503, no endpoint 503, stale endpoint skipped, no service 404', async () => {
    const port81 = await call('GET', '/api/v1/namespaces/default/services/websvc:81/proxy/');
    assert.deepEqual([port81.status, port81.json.message], [503, 'no service port 81 found for service "websvc"']);
    const unnamed = await call('GET', '/api/v1/namespaces/default/services/websvc/proxy/');
    assert.deepEqual([unnamed.status, unnamed.json.message], [503, 'no endpoints available for service "websvc"']);
    const empty = await call('GET', '/api/v1/namespaces/default/services/empty:80/proxy/');
    assert.deepEqual([empty.status, empty.json.message], [503, 'no endpoints available for service "empty:80"']);
    assert.equal((await call('GET', '/api/v1/namespaces/default/services/stale:80/proxy/')).status, 503);
    assert.equal((await call('GET', '/api/v1/namespaces/default/services/nope/proxy/')).status, 404);
  });

  /** A raw upgrade request to the API server; resolves with the answer's head and a socket past it. */
  async function upgrade(path: string): Promise<{ head: string; socket: net.Socket }> {
    const url = new URL(srv.url);
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.token}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
    let got = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (c: Buffer): void => {
        got += c.toString();
        if (got.includes('\r\n\r\n')) {
          socket.off('data', onData);
          resolve();
        }
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
    return { head: got.slice(0, got.indexOf('\r\n\r\n')), socket };
  }

  it('an upgrade through pods/proxy is spliced to the pod without the caller\'s credentials; nodes/proxy refuses one', async () => {
    const { head, socket } = await upgrade(`/api/v1/namespaces/default/pods/web:${port}/proxy/ws?x=1`);
    try {
      assert.match(head, /^HTTP\/1.1 101 /);
      assert.match(head, /X-Path: \/ws\?x=1/);
      assert.match(head, /X-Auth: none/);
      socket.write('ping');
      const [echo] = (await once(socket, 'data')) as [Buffer];
      assert.equal(echo.toString(), 'ping');
    } finally {
      socket.destroy();
    }
    const node = await upgrade('/api/v1/nodes/n1/proxy/exec/default/web/c');
    node.socket.destroy();
    assert.match(node.head, /^HTTP\/1.1 400 /);
  });

  it('CONNECT admission: webhooks see the PodProxyOptions path; a denial is kept, a mutated path is followed', async () => {
    const wh = await startTestWebhookServer();
    try {
      wh.handle('/deny', (req) => (String(req.object.path).includes('secret') ? { allowed: false, status: { message: 'not that path' } } : { allowed: true }));
      wh.handle('/mutate', (req) => (req.object.path === 'old' ? { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify([{ op: 'replace', path: '/path', value: 'new/' }])).toString('base64') } : { allowed: true }));
      const hook = (kind: string, path: string) => ({
        metadata: { name: `proxy-${kind}` },
        webhooks: [{
          name: `${kind}.hooks.example.com`, clientConfig: { url: `https://127.0.0.1:${wh.port}${path}`, caBundle: wh.caBundle },
          rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/proxy'] }], sideEffects: 'None', admissionReviewVersions: ['v1'],
        }],
      });
      assert.equal((await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', hook('deny', '/deny'))).status, 201);
      assert.equal((await call('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', hook('mutate', '/mutate'))).status, 201);
      const denied = await pollUntil('the CONNECT webhook in force', async () => {
        const r = await call('GET', `/api/v1/namespaces/default/pods/web:${port}/proxy/secret/x`);
        return r.status === 400 ? r : undefined;
      }, { timeoutMs: 10_000, intervalMs: 50 });
      assert.equal(denied.json.message, 'admission webhook "deny.hooks.example.com" denied the request: not that path');
      const review = wh.received.find((x) => x.path === '/deny')!.request;
      assert.deepEqual([review.operation, review.kind, review.subResource, review.object.path], ['CONNECT', { group: '', version: 'v1', kind: 'PodProxyOptions' }, 'proxy', 'secret/x']);
      const mutated = await call('GET', `/api/v1/namespaces/default/pods/web:${port}/proxy/old?q=1`);
      assert.deepEqual([mutated.status, mutated.json], [201, 'GET /new/?q=1 ']);
    } finally {
      for (const [kind, type] of [['deny', 'validating'], ['mutate', 'mutating']]) await call('DELETE', `/apis/admissionregistration.k8s.io/v1/${type}webhookconfigurations/proxy-${kind}`);
      await wh.close();
    }
  });

  it('RBAC: a caller without the proxy subresource gets 403 and the target sees nothing', async () => {
    const before = seen.length;
    const denied = await call('GET', `/api/v1/namespaces/default/services/websvc:80/proxy/`, undefined, USER);
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /cannot get resource "services\/proxy"/);
    const post = await call('POST', `/api/v1/namespaces/default/pods/web/proxy/`, 'x', USER);
    assert.match(post.json.message, /cannot create resource "pods\/proxy"/);
    assert.equal(seen.length, before);
  });
});
