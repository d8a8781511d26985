/**
 * Malformed requests for the fuzz suites (fuzz-server.itest.ts, fuzz-agent.itest.ts): what an
 * attacker or a broken client sends to a daemon's TLS port, and what each may answer.
 *
 *   expect: a code       exactly that status
 *           '4xx'        any 400–499
 *           'close'      no HTTP was spoken (garbage instead of TLS): closing is the only answer
 *           'any'        the client hangs up first; only the daemon's survival is checked
 *   status: the reply must be a Kubernetes Status (kind Status, status Failure, code = status)
 */
import { rawExchange, type RawReply, type RawTarget } from '@nodelet/api/testing';

export interface FuzzCase {
  name: string;
  parts: Array<string | Buffer>;
  expect: number | '4xx' | 'close' | 'any';
  status: boolean;
  /** Send without TLS to the TLS port. */
  plain?: boolean;
  /** Half-close after sending (a client that gives up mid-handshake). */
  end?: boolean;
}

export interface CorpusOptions {
  /** A bearer token the daemon accepts. */
  token: string;
  /** A GET path the token may read (e.g. `/api/v1/namespaces/default/configmaps`). */
  readPath: string;
  /** Paths whose segments are badly percent-encoded, answered 400 with a Status. */
  badlyEncoded: string[];
  /** The exec path WebSocket upgrades go to. */
  execPath: string;
  /** Whether the daemon's ordinary errors (401, 404, 405) carry a Status (the agent's are text). */
  statusOnOrdinaryErrors: boolean;
}

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** One request, `Connection: close`, from its request line, headers and body. */
export function req(line: string, headers: string[] = [], body?: string | Buffer): Array<string | Buffer> {
  const head = [line, 'Host: fuzz', ...headers, ...(body !== undefined ? [`Content-Length: ${Buffer.byteLength(body)}`] : []), 'Connection: close', '', ''].join('\r\n');
  return body === undefined ? [head] : [head, body];
}

/** The cases every daemon that speaks HTTPS must survive. */
export function commonCorpus(o: CorpusOptions): FuzzCase[] {
  const auth = `Authorization: Bearer ${o.token}`;
  const ordinary = o.statusOnOrdinaryErrors;
  const ws = (extra: string[]): string[] => [auth, 'Upgrade: websocket', 'Connection: Upgrade', ...extra];
  const upgrade = (path: string, headers: string[]): Array<string | Buffer> => [`GET ${path} HTTP/1.1\r\nHost: fuzz\r\n${headers.join('\r\n')}\r\n\r\n`];
  const cases: FuzzCase[] = [
    // Request lines and targets
    { name: 'GET //[ unauthenticated', parts: req('GET //[ HTTP/1.1'), expect: 401, status: ordinary },
    { name: 'GET //[', parts: req('GET //[ HTTP/1.1', [auth]), expect: 404, status: ordinary },
    { name: 'absolute-form http://[', parts: req('GET http://[ HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'absolute-form ftp://x/', parts: req('GET ftp://x/ HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'GET /%zz', parts: req('GET /%zz HTTP/1.1', [auth]), expect: '4xx', status: ordinary },
    ...o.badlyEncoded.map((p): FuzzCase => ({ name: `bad percent-encoding ${p}`, parts: req(`GET ${p} HTTP/1.1`, [auth]), expect: 400, status: true })),
    { name: 'NUL in the target', parts: req('GET /\x00 HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'space in the target', parts: req('GET /a b HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'HTTP/9.9', parts: req('GET / HTTP/9.9', [auth]), expect: '4xx', status: true },
    // Node's parser reads this as a request without a version: an ordinary unauthenticated GET.
    { name: 'HTTP/0.9 request line', parts: ['GET /\r\n\r\n'], expect: '4xx', status: ordinary },
    { name: 'request line of 100 KiB', parts: req(`GET /${'a'.repeat(100 * 1024)} HTTP/1.1`, [auth]), expect: '4xx', status: true },
    { name: 'unknown verb BREW', parts: req('BREW / HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'lower-case verb', parts: req('get / HTTP/1.1', [auth]), expect: 400, status: true },
    { name: 'PROPFIND', parts: req(`PROPFIND ${o.readPath} HTTP/1.1`, [auth]), expect: '4xx', status: ordinary },
    { name: 'CONNECT', parts: req('CONNECT fuzz:443 HTTP/1.1', [auth]), expect: 405, status: true },
    { name: 'HTTP/2 preface over HTTP/1.1', parts: ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'], expect: '4xx', status: true },
    { name: 'binary garbage after TLS', parts: [Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a])], expect: 400, status: true },
    // Headers
    { name: 'a 100 KiB header', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, `X-Big: ${'a'.repeat(100 * 1024)}`]), expect: 431, status: true },
    { name: '2 MiB of headers', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, ...Array.from({ length: 2048 }, (_, i) => `X-H${i}: ${'b'.repeat(1000)}`)]), expect: 431, status: true },
    { name: 'header without a colon', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, 'Bad Header']), expect: 400, status: true },
    { name: 'NUL in a header value', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, 'X-A: a\x00b']), expect: 400, status: true },
    { name: 'obsolete line folding', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, 'X-A: a', ' b']), expect: 400, status: true },
    { name: 'Content-Length and Transfer-Encoding', parts: req(`POST ${o.readPath} HTTP/1.1`, [auth, 'Content-Length: 4', 'Transfer-Encoding: chunked']), expect: 400, status: true },
    { name: 'two Content-Lengths', parts: req(`POST ${o.readPath} HTTP/1.1`, [auth, 'Content-Length: 4', 'Content-Length: 5']), expect: 400, status: true },
    { name: 'negative Content-Length', parts: req(`POST ${o.readPath} HTTP/1.1`, [auth, 'Content-Length: -1']), expect: 400, status: true },
    { name: 'Expect: teapot', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth, 'Expect: teapot']), expect: 417, status: true },
    // Credentials
    { name: 'no credentials', parts: req(`GET ${o.readPath} HTTP/1.1`), expect: 401, status: ordinary },
    { name: 'unknown token', parts: req(`GET ${o.readPath} HTTP/1.1`, ['Authorization: Bearer not-a-token']), expect: 401, status: ordinary },
    { name: 'empty bearer', parts: req(`GET ${o.readPath} HTTP/1.1`, ['Authorization: Bearer ']), expect: 401, status: ordinary },
    { name: 'basic auth', parts: req(`GET ${o.readPath} HTTP/1.1`, ['Authorization: Basic YWRtaW46YWRtaW4=']), expect: 401, status: ordinary },
    { name: 'bearer with two tokens', parts: req(`GET ${o.readPath} HTTP/1.1`, [`Authorization: Bearer ${o.token} ${o.token}`]), expect: 401, status: ordinary },
    { name: '60 KiB token', parts: req(`GET ${o.readPath} HTTP/1.1`, [`Authorization: Bearer ${'t'.repeat(60 * 1024)}`]), expect: 401, status: ordinary },
    // WebSocket upgrades
    { name: 'upgrade: unauthenticated', parts: upgrade(o.execPath, ['Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`]), expect: 401, status: true },
    { name: 'upgrade: to a non-exec path', parts: upgrade(o.readPath, ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`])), expect: '4xx', status: true },
    { name: 'upgrade: malformed target', parts: upgrade('http://[', ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`])), expect: 400, status: true },
    { name: 'upgrade: badly encoded path', parts: upgrade(`${o.execPath.replace(/\/[^/]+(\?|$)/, '/%zz$1')}`, ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`])), expect: '4xx', status: true },
    { name: 'upgrade: missing key', parts: upgrade(o.execPath, ws(['Sec-WebSocket-Version: 13', 'Sec-WebSocket-Protocol: v5.channel.k8s.io'])), expect: '4xx', status: true },
    { name: 'upgrade: wrong version', parts: upgrade(o.execPath, ws(['Sec-WebSocket-Version: 7', `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Protocol: v5.channel.k8s.io'])), expect: '4xx', status: true },
    { name: 'upgrade: unknown subprotocol', parts: upgrade(o.execPath, ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Protocol: chat, superchat'])), expect: '4xx', status: true },
    { name: 'upgrade: SPDY offering no protocol', parts: upgrade(o.execPath, [auth, 'Upgrade: SPDY/3.1', 'Connection: Upgrade']), expect: '4xx', status: true },
    { name: 'upgrade: h2c', parts: upgrade(o.execPath, [auth, 'Upgrade: h2c', 'Connection: Upgrade, HTTP2-Settings', 'HTTP2-Settings: AAMAAABkAAQAAP__']), expect: '4xx', status: true },
    { name: 'upgrade: POST', parts: [`POST ${o.execPath} HTTP/1.1\r\nHost: fuzz\r\n${ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`]).join('\r\n')}\r\n\r\n`], expect: '4xx', status: true },
    { name: 'upgrade: client hangs up at once', parts: upgrade(o.execPath, ws(['Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Protocol: v5.channel.k8s.io'])), expect: 'any', status: false },
    // Not TLS at all
    { name: 'plain HTTP to the TLS port', parts: req(`GET ${o.readPath} HTTP/1.1`, [auth]), expect: 'close', status: false, plain: true },
    { name: 'random bytes instead of a ClientHello', parts: [Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))], expect: 'close', status: false, plain: true },
    { name: 'truncated ClientHello', parts: [Buffer.from('160301020001', 'hex'), Buffer.from('0001fc0303', 'hex')], expect: 'close', status: false, plain: true, end: true },
    { name: 'TLS record header claiming 64 KiB', parts: [Buffer.from('16030100ffff', 'hex'), Buffer.alloc(1024)], expect: 'close', status: false, plain: true, end: true },
  ];
  return cases;
}

/** What went wrong with one reply, or undefined when it is what the case allows. */
export function judge(c: FuzzCase, r: RawReply): string | undefined {
  if (c.expect === 'any') return undefined;
  if (c.expect === 'close') return r.status === 0 || (r.status >= 400 && r.status < 500) ? undefined : `expected a close, got ${r.status}`;
  if (r.status === 0) return `the connection was dropped without a reply${r.error ? ` (${r.error})` : ''}`;
  if (c.expect === '4xx' ? r.status < 400 || r.status > 499 : r.status !== c.expect) return `expected ${c.expect}, got ${r.status}: ${r.body.slice(0, 300)}`;
  if (!c.status) return undefined;
  let body: { kind?: string; status?: string; code?: number };
  try {
    body = JSON.parse(r.body) as typeof body;
  } catch {
    return `expected a Status body, got ${JSON.stringify(r.body.slice(0, 200))}`;
  }
  if (body.kind !== 'Status' || body.status !== 'Failure' || body.code !== r.status) return `not a failure Status for ${r.status}: ${r.body.slice(0, 300)}`;
  return undefined;
}

/**
 * Sends every case on its own connection and returns one line per case whose reply was not
 * allowed. 'any' cases hang up right after sending.
 */
export async function runCorpus(target: RawTarget, cases: readonly FuzzCase[]): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const r = await rawExchange(c.plain ? { host: target.host, port: target.port } : target, c.parts, { timeoutMs: c.expect === 'any' ? 50 : 15_000, end: c.end });
    const why = judge(c, r);
    if (why) failures.push(`${c.name}: ${why}`);
  }
  return failures;
}
