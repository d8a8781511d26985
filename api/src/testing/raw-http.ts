/**
 * A raw HTTP/1.1 client for tests that send what a well-behaved client never would: malformed
 * request lines, oversized headers, garbage instead of a TLS handshake. It writes the bytes as
 * given and reads one reply, or reports that the server closed without one.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface RawTarget {
  host: string;
  port: number;
  /** Speak TLS; `ca` verifies the server, without it the certificate is not checked. */
  tls?: { ca?: string; cert?: string; key?: string };
}

export interface RawReply {
  /** 0 when the connection ended without a complete reply head. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The connection ended (or failed) before a reply was complete. */
  dropped: boolean;
  /** The socket error, if the connection failed. */
  error?: string;
}

function parseHead(buf: Buffer): { status: number; headers: Record<string, string>; rest: Buffer } | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status, headers, rest: buf.subarray(end + 4) };
}

/** The reply in `buf` once it is complete (by Content-Length or chunked framing). */
function parseReply(buf: Buffer): RawReply | undefined {
  const head = parseHead(buf);
  if (!head) return undefined;
  const { status, headers } = head;
  const rest = head.rest;
  if (headers['content-length'] !== undefined) {
    const n = Number(headers['content-length']);
    if (rest.length < n) return undefined;
    return { status, headers, body: rest.subarray(0, n).toString('utf8'), dropped: false };
  }
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    let body = '';
    let pos = 0;
    for (;;) {
      const nl = rest.indexOf('\r\n', pos);
      if (nl < 0) return undefined;
      const size = parseInt(rest.subarray(pos, nl).toString('latin1'), 16);
      if (Number.isNaN(size)) return undefined;
      if (size === 0) return { status, headers, body, dropped: false };
      if (rest.length < nl + 2 + size + 2) return undefined;
      body += rest.subarray(nl + 2, nl + 2 + size).toString('utf8');
      pos = nl + 2 + size + 2;
    }
  }
  // 1xx/204/304 have no body; anything else without a length ends at close.
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return { status, headers, body: '', dropped: false };
  return undefined;
}

/**
 * Connects, writes `parts` in order (a delay of `gapMs` between them; with `end`, then
 * half-closes), and resolves with the first complete reply, or with `dropped` when the server
 * closes first. Write errors after the
 * server answered (it may close while a large upload is still going) are ignored.
 */
export function rawExchange(target: RawTarget, parts: ReadonlyArray<string | Buffer>, o: { timeoutMs?: number; gapMs?: number; end?: boolean } = {}): Promise<RawReply> {
  return new Promise((resolve) => {
    const sock: net.Socket = target.tls
      ? tls.connect({ host: target.host, port: target.port, ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, rejectUnauthorized: !!target.tls.ca, servername: net.isIP(target.host) ? undefined : target.host })
      : net.connect({ host: target.host, port: target.port });
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = (r: RawReply): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ status: 0, headers: {}, body: buf.toString('utf8'), dropped: true, error: 'timed out waiting for a reply' }), o.timeoutMs ?? 10_000);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const r = parseReply(buf);
      if (r) finish(r);
    });
    sock.on('end', () => {
      const r = parseReply(buf);
      if (r) return finish(r);
      // A reply whose body runs until close.
      const head = parseHead(buf);
      if (head && head.headers['content-length'] === undefined) return finish({ status: head.status, headers: head.headers, body: head.rest.toString('utf8'), dropped: false });
      finish({ status: 0, headers: {}, body: buf.toString('utf8'), dropped: true });
    });
    sock.on('error', (err) => {
      const r = parseReply(buf);
      finish(r ?? { status: 0, headers: {}, body: buf.toString('utf8'), dropped: true, error: err.message });
    });
    const writeAll = async (): Promise<void> => {
      for (const [i, p] of parts.entries()) {
        if (settled || sock.destroyed) return;
        if (i > 0 && o.gapMs) await new Promise((r) => setTimeout(r, o.gapMs));
        if (!sock.write(p)) await new Promise((r) => sock.once('drain', r).once('close', r));
      }
      if (o.end && !sock.destroyed) sock.end();
    };
    sock.once(target.tls ? 'secureConnect' : 'connect', () => void writeAll());
  });
}

/** A request whose body never completes (slowUpload). */
export interface StalledUpload {
  socket: net.Socket;
  /** Everything the server sent, once the connection closed. The caller never closes it first, so a close is the server's. */
  closed: Promise<string>;
}

/**
 * Opens a connection and sends `head` (request line and headers, ending in the blank line) and
 * `partialBody`, which is shorter than the Content-Length `head` declares, then sends nothing
 * more: the slow-body client a server must time out and close. `socket.destroy()` in cleanup.
 */
export function stalledUpload(target: RawTarget, head: string, partialBody: string | Buffer): StalledUpload {
  const socket: net.Socket = target.tls
    ? tls.connect({ host: target.host, port: target.port, ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, rejectUnauthorized: !!target.tls.ca, servername: net.isIP(target.host) ? undefined : target.host })
    : net.connect({ host: target.host, port: target.port });
  socket.on('error', () => undefined);
  socket.once(target.tls ? 'secureConnect' : 'connect', () => {
    socket.write(head);
    socket.write(partialBody);
  });
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { socket, closed: new Promise((resolve) => socket.once('close', () => resolve(text))) };
}
