// The bearer token carried as a WebSocket subprotocol (browsers cannot set Authorization on a
// WebSocket): the filter on a real node:http server, then a real API server's exec upgrade with
// its audit log and logger, where the token must never appear.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noopLogger, pollUntil, type Logger } from '@nodelet/base';
import type { UserInfo } from '../auth/types.js';
import { parseAuditPolicy } from '../audit/policy.js';
import { startTestApiServer, type TestApiServer } from '../testing/test-server.js';
import { ApiRequest, runChain } from './chain.js';
import { authenticationFilter, BEARER_PROTOCOL_PREFIX } from './authentication.js';
import { recoveryFilter } from './recovery.js';

const TOKENS = new Map<string, UserInfo>([
  ['alice-token', { name: 'alice', groups: ['system:authenticated'] }],
  ['bob-token', { name: 'bob', groups: ['system:authenticated'] }],
]);
const b64url = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const tokenProtocol = (t: string): string => BEARER_PROTOCOL_PREFIX + b64url(t);

/** What the handler saw of an authenticated request. */
interface Seen {
  user: string;
  protocols: string | undefined;
  distinct: string[] | undefined;
  raw: string[];
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose chain is only the authentication filter; requests and upgrades both go through it. */
async function serve(seen: Seen[]): Promise<number> {
  const chain = [recoveryFilter(noopLogger), authenticationFilter({ clientCertificates: false, authenticateBearer: async (t) => TOKENS.get(t) })];
  const record = (r: ApiRequest): void => {
    seen.push({ user: r.user!.name, protocols: r.req.headers['sec-websocket-protocol'], distinct: r.req.headersDistinct['sec-websocket-protocol'], raw: r.req.rawHeaders });
  };
  const server = http.createServer((req, res) => void runChain(chain, async (r) => {
    record(r);
    r.res.end('ok');
  }, new ApiRequest(req, res)));
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    void runChain(chain, async (r) => {
      record(r);
      socket.end('HTTP/1.1 418 Teapot\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    }, new ApiRequest(req, new http.ServerResponse(req), { socket, head }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as net.AddressInfo).port;
}

/** Sends a raw request and returns the status code of the reply. */
async function statusOf(port: number, headers: string[], upgrade = true): Promise<number> {
  const lines = ['GET /api/v1/namespaces/default/pods/p/exec?command=sh&stdin=true HTTP/1.1', 'Host: x', ...(upgrade ? ['Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='] : ['Connection: close']), ...headers];
  const socket = net.connect(port, '127.0.0.1');
  socket.end(lines.join('\r\n') + '\r\n\r\n');
  let reply = '';
  try {
    // The status line is enough: an upgrade's failure need not close the connection.
    for await (const chunk of socket) {
      reply += String(chunk);
      if (reply.includes('\r\n')) break;
    }
  } finally {
    socket.destroy();
  }
  const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
  assert.ok(m, reply);
  return Number(m[1]);
}

describe('bearer token in the WebSocket subprotocol', () => {
  it('authenticates a WebSocket upgrade and takes the token out of every view of the header', async () => {
    const seen: Seen[] = [];
    const port = await serve(seen);
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}, v5.channel.k8s.io`, 'Sec-WebSocket-Protocol: v4.channel.k8s.io']), 418);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.user, 'alice');
    assert.equal(seen[0]!.protocols, 'v5.channel.k8s.io,v4.channel.k8s.io');
    assert.deepEqual(seen[0]!.distinct, ['v5.channel.k8s.io,v4.channel.k8s.io']);
    assert.ok(!seen[0]!.raw.join('\n').includes(b64url('alice-token')), seen[0]!.raw.join('\n'));
  });

  it('answers 401 for a malformed or unknown token protocol', async () => {
    const seen: Seen[] = [];
    const port = await serve(seen);
    const bad = [
      `${BEARER_PROTOCOL_PREFIX}${Buffer.from('alice-token').toString('base64')}=`, // padded
      `${BEARER_PROTOCOL_PREFIX}a+b/`, // standard alphabet
      `${BEARER_PROTOCOL_PREFIX}${b64url(Buffer.from([0xff, 0xfe, 0x41]))}`, // not UTF-8
      tokenProtocol('nobody-token'),
    ];
    for (const p of bad) assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${p}, v5.channel.k8s.io`]), 401, p);
    // Two tokens, or no other subprotocol to answer with.
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}, ${tokenProtocol('alice-token')}, v5.channel.k8s.io`]), 401);
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}`]), 401);
    assert.equal(seen.length, 0);
  });

  it('is ignored on a request that is not a WebSocket upgrade', async () => {
    const seen: Seen[] = [];
    const port = await serve(seen);
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}, v5.channel.k8s.io`], false), 401);
    assert.equal(await statusOf(port, ['Connection: Upgrade', 'Upgrade: spdy/3.1', `Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}, v5.channel.k8s.io`], false), 401);
    assert.equal(seen.length, 0);
  });

  it('lets a valid Authorization header win, as the union order does, and still strips the protocol token', async () => {
    const seen: Seen[] = [];
    const port = await serve(seen);
    const protocols = `Sec-WebSocket-Protocol: ${tokenProtocol('alice-token')}, v5.channel.k8s.io`;
    assert.equal(await statusOf(port, ['Authorization: Bearer bob-token', protocols]), 418);
    // An Authorization header that fails falls through to the protocol token.
    assert.equal(await statusOf(port, ['Authorization: Bearer wrong', protocols]), 418);
    assert.deepEqual(seen.map((s) => [s.user, s.protocols]), [['bob', 'v5.channel.k8s.io'], ['alice', 'v5.channel.k8s.io']]);
  });
});

describe('the protocol token on a real API server', () => {
  const SECRET = 'console-secret-token-value';
  let srv: TestApiServer;
  let dir: string;
  const logged: string[] = [];
  const logger: Logger = {
    error: (...a: unknown[]) => void logged.push(JSON.stringify(a)),
    warn: (...a: unknown[]) => void logged.push(JSON.stringify(a)),
    info: (...a: unknown[]) => void logged.push(JSON.stringify(a)),
    debug: (...a: unknown[]) => void logged.push(JSON.stringify(a)),
    child: () => logger,
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-ws-auth-'));
    srv = await startTestApiServer({
      tokens: new Map([[SECRET, { name: 'console-user', groups: ['system:masters', 'system:authenticated'] }]]),
      logger,
      audit: { policy: parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: RequestResponse\n'), path: join(dir, 'audit.log'), rotation: { maxSizeMB: 0, maxAgeDays: 0, maxBackups: 0 } },
    });
  });
  after(async () => {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates an exec upgrade (404 for the missing pod, not 401) and neither logs nor audits the token', async () => {
    const port = Number(new URL(srv.url).port);
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${tokenProtocol(SECRET)}, v5.channel.k8s.io`]), 404);
    assert.equal(await statusOf(port, [`Sec-WebSocket-Protocol: ${BEARER_PROTOCOL_PREFIX}%%%, v5.channel.k8s.io`]), 401);
    const audit = await pollUntil('the exec request audited', () => {
      const text = readFileSync(join(dir, 'audit.log'), 'utf8');
      return /"subresource":"exec"[^\n]*"code":404/.test(text) ? text : undefined;
    }, { timeoutMs: 5000 });
    assert.match(audit, /"username":"console-user"/);
    assert.match(audit, /"subresource":"exec"/);
    for (const text of [audit, logged.join('\n')]) {
      assert.ok(!text.includes(SECRET) && !text.includes(b64url(SECRET)), 'the token reached the log or the audit log');
    }
  });
});
