/**
 * FakeStreamingServer: the runtime side of the v4.channel.k8s.io WebSocket protocol, on
 * 127.0.0.1:<random port>, for unit tests of openStream / execStream. Point the fake runtime's
 * Exec/Attach/PortForward URLs at it with `fake.runtime.streamingBaseUrl = streaming.baseUrl`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeStreamSession {
  /** `exec`, `attach` or `portforward`. */
  kind: string;
  url: URL;
  protocol: string;
  /** Bytes received on channel 0, as they arrive. */
  readonly stdin: Buffer[];
  /** Resize messages received on channel 4. */
  readonly resizes: { Width: number; Height: number }[];
  write(channel: number, data: string | Buffer): void;
  /** Sends the v4 status for `exitCode` and closes. */
  exit(exitCode: number): void;
  /** Sends a failure status with `message` and closes. */
  fail(message: string): void;
  onStdin(fn: (data: Buffer) => void): void;
}

export type FakeStreamHandler = (session: FakeStreamSession) => void;

export class FakeStreamingServer {
  readonly baseUrl: string;
  /** The handler for new sessions; by default prints "fake\n" and exits 0. */
  handler: FakeStreamHandler = (s) => {
    s.write(1, 'fake\n');
    s.exit(0);
  };
  /** Protocols this fake accepts (containerd 1.6: v4 and the unversioned one, not v5). */
  accepted = ['v4.channel.k8s.io', 'channel.k8s.io'];
  readonly sessions: FakeStreamSession[] = [];
  readonly #http: Server;
  readonly #wss: WebSocketServer;

  private constructor(http: Server, wss: WebSocketServer) {
    this.#http = http;
    this.#wss = wss;
    this.baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  }

  static async start(): Promise<FakeStreamingServer> {
    const http = createServer((_req, res) => {
      res.statusCode = 400;
      res.end('websocket only');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const ref: { self?: FakeStreamingServer } = {};
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (protocols) => [...protocols].find((p) => ref.self?.accepted.includes(p)) ?? false,
    });
    http.on('upgrade', (req, socket, head) => {
      const offered = String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((s) => s.trim());
      if (!offered.some((p) => ref.self?.accepted.includes(p))) {
        socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => ref.self?.onConnection(ws, new URL(req.url ?? '/', 'http://127.0.0.1')));
    });
    ref.self = new FakeStreamingServer(http, wss);
    return ref.self;
  }

  private onConnection(ws: WebSocket, url: URL): void {
    const stdinListeners: ((d: Buffer) => void)[] = [];
    const status = (obj: object): void => {
      ws.send(Buffer.concat([Buffer.of(3), Buffer.from(JSON.stringify(obj))]));
      ws.close();
    };
    const session: FakeStreamSession = {
      kind: url.pathname.split('/')[1] ?? '',
      url,
      protocol: ws.protocol,
      stdin: [],
      resizes: [],
      write: (channel, data) => ws.send(Buffer.concat([Buffer.of(channel), Buffer.from(data)])),
      exit: (code) =>
        status(
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
      fail: (message) => status({ metadata: {}, status: 'Failure', message, reason: 'InternalError' }),
      onStdin: (fn) => stdinListeners.push(fn),
    };
    ws.on('message', (data: Buffer) => {
      const payload = data.subarray(1);
      if (data[0] === 0) {
        session.stdin.push(payload);
        for (const fn of stdinListeners) fn(payload);
      } else if (data[0] === 4) {
        session.resizes.push(JSON.parse(payload.toString('utf8')) as { Width: number; Height: number });
      }
    });
    this.sessions.push(session);
    // containerd starts every output channel with an empty frame.
    ws.send(Buffer.of(1));
    this.handler(session);
  }

  async close(): Promise<void> {
    for (const c of this.#wss.clients) c.terminate();
    this.#wss.close();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }
}
