/**
 * FakeStreamingServer: the runtime side of CRI streaming over SPDY/3.1 (what containerd serves),
 * on 127.0.0.1:<random port>, for unit tests of the streaming clients and their callers. Point the
 * fake runtime's Exec/Attach/PortForward URLs at it with `fake.runtime.streamingBaseUrl = streaming.baseUrl`.
 *
 * Exec/attach: once the streams the URL's flags call for have arrived (FakeRuntimeService puts the
 * request's stdin/stdout/stderr/tty on the URL), `handler` gets a session. Port-forward: every
 * error+data pair goes to `portForwardHandler` (default: echo).
 */
import { createServer, type Server, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SpdyConnection, headerValue, type SpdyStream } from '../spdy/index.js';

export interface FakeStreamSession {
  /** `exec`, `attach` or `portforward`. */
  kind: string;
  url: URL;
  protocol: string;
  /** Bytes received on stdin, as they arrive. */
  readonly stdin: Buffer[];
  /** True once the client half-closed stdin. */
  stdinEnded: boolean;
  /** Resize messages received. */
  readonly resizes: { Width: number; Height: number }[];
  write(channel: 1 | 2, data: string | Buffer): void;
  /** Sends the v4 status for `exitCode` and closes. */
  exit(exitCode: number): void;
  /** Sends a failure status with `message` and closes. */
  fail(message: string): void;
  onStdin(fn: (data: Buffer) => void): void;
  onStdinEnd(fn: () => void): void;
  /** The raw SPDY stream of a type (stdout, stdin, …), for backpressure tests. */
  stream(type: string): SpdyStream | undefined;
}

export type FakeStreamHandler = (session: FakeStreamSession) => void;
export type FakePortForwardHandler = (port: number, data: SpdyStream, error: SpdyStream) => void;

export class FakeStreamingServer {
  readonly baseUrl: string;
  /** The handler for new sessions; by default prints "fake\n" and exits 0. */
  handler: FakeStreamHandler = (s) => {
    s.write(1, 'fake\n');
    s.exit(0);
  };
  /** By default echoes the data stream back, then closes the error stream (as kubelet's forwarder does). */
  portForwardHandler: FakePortForwardHandler = (_port, data, error) => void data.pipe(data).on('finish', () => error.end());
  /** Protocols this fake accepts (containerd 1.6's SPDY ones). */
  accepted = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io', 'portforward.k8s.io'];
  readonly sessions: FakeStreamSession[] = [];
  readonly #http: Server;
  readonly #conns = new Set<SpdyConnection>();

  private constructor(http: Server) {
    this.#http = http;
    this.baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  }

  static async start(): Promise<FakeStreamingServer> {
    const http = createServer((_req, res) => {
      res.statusCode = 400;
      res.end('upgrade to SPDY/3.1 only');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const self = new FakeStreamingServer(http);
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => self.#upgrade(req, socket, head));
    return self;
  }

  #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const offered = String(req.headers['x-stream-protocol-version'] ?? '').split(',').map((s) => s.trim());
    const protocol = offered.find((p) => this.accepted.includes(p));
    if (String(req.headers.upgrade).toLowerCase() !== 'spdy/3.1' || !protocol) {
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`);
    if (head.length) socket.unshift(head);
    const conn = new SpdyConnection(socket, { isServer: true });
    this.#conns.add(conn);
    conn.on('close', () => this.#conns.delete(conn));
    const url = new URL(req.url ?? '/', this.baseUrl);
    const kind = url.pathname.split('/')[1] ?? '';
    if (kind === 'portforward') return this.#portForward(conn);
    const q = url.searchParams;
    const flag = (n: string): boolean => q.get(n) === 'true';
    const expected = 1 + Number(flag('stdin')) + Number(flag('stdout')) + Number(flag('stderr') && !flag('tty')) + Number(flag('tty') && protocol.startsWith('v') && protocol >= 'v3');
    const streams = new Map<string, SpdyStream>();
    conn.on('stream', (s: SpdyStream) => {
      s.on('error', () => {});
      s.reply();
      streams.set(headerValue(s.headers, 'streamtype') ?? '', s);
      if (streams.size === expected) this.#session(conn, kind, url, protocol, streams);
    });
  }

  #session(conn: SpdyConnection, kind: string, url: URL, protocol: string, streams: Map<string, SpdyStream>): void {
    const stdinListeners: ((d: Buffer) => void)[] = [];
    const endListeners: (() => void)[] = [];
    const finish = (status: object): void => {
      const err = streams.get('error')!;
      err.end(JSON.stringify(status));
      for (const [type, s] of streams) if (type !== 'error' && type !== 'stdin' && type !== 'resize') s.end();
      conn.close();
      setImmediate(() => conn.destroy());
    };
    const session: FakeStreamSession = {
      kind,
      url,
      protocol,
      stdin: [],
      stdinEnded: false,
      resizes: [],
      write: (channel, data) => void streams.get(channel === 1 ? 'stdout' : 'stderr')?.write(data),
      exit: (code) =>
        finish(
          code === 0
            ? { metadata: {}, status: 'Success' }
            : {
                metadata: {},
                status: 'Failure',
                message: `command terminated with non-zero exit code: error executing command, exit status ${code}`,
                reason: 'NonZeroExitCode',
                details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
              },
        ),
      fail: (message) => finish({ metadata: {}, status: 'Failure', message, reason: 'InternalError' }),
      onStdin: (fn) => stdinListeners.push(fn),
      onStdinEnd: (fn) => endListeners.push(fn),
      stream: (type) => streams.get(type),
    };
    streams.get('stdin')?.on('data', (d: Buffer) => {
      session.stdin.push(d);
      for (const fn of stdinListeners) fn(d);
    });
    streams.get('stdin')?.on('end', () => {
      session.stdinEnded = true;
      for (const fn of endListeners) fn();
    });
    let pending = '';
    streams.get('resize')?.on('data', (d: Buffer) => {
      pending += d.toString('utf8');
      for (let i = pending.indexOf('}'); i >= 0; i = pending.indexOf('}')) {
        session.resizes.push(JSON.parse(pending.slice(0, i + 1)) as { Width: number; Height: number });
        pending = pending.slice(i + 1);
      }
    });
    this.sessions.push(session);
    this.handler(session);
  }

  #portForward(conn: SpdyConnection): void {
    const pairs = new Map<string, { data?: SpdyStream; error?: SpdyStream }>();
    conn.on('stream', (s: SpdyStream) => {
      s.on('error', () => {});
      s.reply();
      const id = headerValue(s.headers, 'requestid') ?? '';
      const p = pairs.get(id) ?? {};
      p[headerValue(s.headers, 'streamtype') === 'data' ? 'data' : 'error'] = s;
      pairs.set(id, p);
      if (p.data && p.error) {
        pairs.delete(id);
        this.portForwardHandler(Number(headerValue(s.headers, 'port')), p.data, p.error);
      }
    });
  }

  async close(): Promise<void> {
    for (const c of this.#conns) c.destroy();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }
}
