/**
 * The resolver's sockets: UDP and TCP on the same address and port (RFC 7766: TCP is not
 * optional). Over TCP each message has a two-byte length prefix; a connection may carry many
 * queries (answered in order), is closed after `tcpIdleMs` without one, and at most
 * `maxTcpConnections` are open at once. A handler failure or a socket error is logged; nothing a
 * client sends can throw out of here.
 *
 *   listen(): bind UDP, then TCP on the port UDP got (port 0: retried when TCP finds it taken)
 *   close():  stop accepting, end TCP connections, close the UDP socket. Idempotent.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import { AgentError, describeError, type Logger } from '@nodelet/base';

/** What serves a query: the reply bytes, or undefined to send nothing. */
export type QueryHandler = (msg: Buffer, proto: 'udp' | 'tcp', family: 4 | 6, signal: AbortSignal) => Promise<Buffer | undefined>;

const MAX_PENDING_PER_CONNECTION = 64;

export interface DnsServerOptions {
  host: string;
  port: number;
  handler: QueryHandler;
  log: Logger;
  tcpIdleMs?: number;
  maxTcpConnections?: number;
}

export class DnsServer {
  readonly #o: DnsServerOptions;
  readonly #stop = new AbortController();
  readonly #conns = new Set<Socket>();
  #udp!: UdpSocket;
  #tcp!: Server;
  #port = 0;
  #closed?: Promise<void>;

  private constructor(o: DnsServerOptions) {
    this.#o = o;
  }

  /** Binds both sockets; throws ERR_UNAVAILABLE (with the socket error as cause) when it cannot. */
  static async listen(o: DnsServerOptions): Promise<DnsServer> {
    const s = new DnsServer(o);
    for (let attempt = 0; ; attempt++) {
      try {
        await s.#bind();
        return s;
      } catch (err) {
        const retry = o.port === 0 && attempt < 10 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (!retry) throw new AgentError('ERR_UNAVAILABLE', `cannot listen for DNS on ${hostPort(o.host, o.port)}: ${describeError(err)}`, { cause: err });
      }
    }
  }

  get address(): { ip: string; port: number } {
    return { ip: this.#o.host, port: this.#port };
  }

  async #bind(): Promise<void> {
    const family = isIP(this.#o.host) === 6 ? 6 : 4;
    const udp = createSocket({ type: family === 6 ? 'udp6' : 'udp4' });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(this.#o.port, this.#o.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    const port = udp.address().port;
    const tcp = createServer((sock) => this.#onConnection(sock, family));
    tcp.maxConnections = this.#o.maxTcpConnections ?? 1000;
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen({ port, host: this.#o.host }, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      udp.close();
      throw err;
    }
    udp.on('error', (err) => this.#o.log.warn({ err: describeError(err) }, 'DNS UDP socket error'));
    udp.on('message', (msg, rinfo) => this.#onDatagram(msg, rinfo.address, rinfo.port, family));
    tcp.on('error', (err) => this.#o.log.warn({ err: describeError(err) }, 'DNS TCP listener error'));
    this.#udp = udp;
    this.#tcp = tcp;
    this.#port = port;
  }

  #onDatagram(msg: Buffer, address: string, port: number, family: 4 | 6): void {
    this.#o
      .handler(msg, 'udp', family, this.#stop.signal)
      .then((reply) => {
        if (reply && !this.#stop.signal.aborted) this.#udp.send(reply, port, address, (err) => err && this.#o.log.debug({ err: describeError(err) }, 'DNS UDP reply not sent'));
      })
      .catch((err: unknown) => this.#o.log.error({ err: describeError(err) }, 'DNS UDP query failed'));
  }

  #onConnection(sock: Socket, family: 4 | 6): void {
    this.#conns.add(sock);
    sock.setTimeout(this.#o.tcpIdleMs ?? 10_000, () => sock.destroy());
    sock.on('close', () => this.#conns.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf = Buffer.alloc(0);
    let chain = Promise.resolve();
    let pending = 0;
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = Buffer.from(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        buf = buf.subarray(2 + msg.length);
        // A client that pipelines faster than we answer is read no further until we catch up.
        if (++pending >= MAX_PENDING_PER_CONNECTION) sock.pause();
        chain = chain.then(async () => {
          try {
            const reply = await this.#o.handler(msg, 'tcp', family, this.#stop.signal);
            if (!reply || sock.destroyed) return;
            const len = Buffer.alloc(2);
            len.writeUInt16BE(reply.length);
            sock.write(Buffer.concat([len, reply]));
          } catch (err) {
            this.#o.log.error({ err: describeError(err) }, 'DNS TCP query failed');
            sock.destroy();
          } finally {
            if (--pending < MAX_PENDING_PER_CONNECTION && sock.isPaused()) sock.resume();
          }
        });
      }
    });
  }

  /** Stops both sockets and ends open TCP connections. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      for (const c of this.#conns) c.destroy();
      await Promise.all([
        new Promise<void>((r) => this.#tcp.close(() => r())),
        new Promise<void>((r) => {
          try {
            this.#udp.close(() => r());
          } catch {
            r();
          }
        }),
      ]);
    })();
    return this.#closed;
  }
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
