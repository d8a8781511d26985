/**
 * Client side of CRI PortForward over SPDY/3.1 (`portforward.k8s.io`, what kubectl and crictl
 * speak). One session per PortForward URL; every forwarded connection is a pair of streams that
 * share a request id:
 *
 *   SYN_STREAM {streamtype: error, port: 8080, requestid: 7}   we half-close it at once; the runtime
 *                                                              writes why a connection failed, if it did
 *   SYN_STREAM {streamtype: data,  port: 8080, requestid: 7}   the connection's bytes, both ways;
 *                                                              our FIN = the local side finished sending
 *
 * A refused connection inside the pod fails its own pair only; the session carries on.
 */
import type { Duplex } from 'node:stream';
import { AgentError } from '@nodelet/base';
import type { PortForwardRequest } from '@nodelet/proto';
import type { SpdyConnection, SpdyStream } from './spdy/index.js';
import { dialSpdy, type SpdyDialOptions } from './stream-upgrade.js';
import type { CriClient } from './types.js';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
const MAX_ERROR_BYTES = 16 * 1024;

export class PortForwardSession {
  readonly conn: SpdyConnection;
  /** Settles when the session's socket has closed. */
  readonly closed: Promise<void>;
  #requestId = 0;

  constructor(conn: SpdyConnection) {
    this.conn = conn;
    this.closed = new Promise((resolve) => conn.once('close', () => resolve()));
  }

  /** Upgrades a PortForward URL. */
  static async dial(url: string, opts: SpdyDialOptions = {}): Promise<PortForwardSession> {
    const { conn } = await dialSpdy(url, [PORT_FORWARD_PROTOCOL], opts);
    return new PortForwardSession(conn);
  }

  /**
   * Forwards `local` to `port` in the pod until both directions are done. Rejects with the
   * runtime's message (ERR_UNAVAILABLE) when the connection inside the pod failed, e.g. refused.
   * `local` is ended (or destroyed on failure) by the time this settles; a socket should allow
   * half-open connections, so that its client's FIN does not cut off the answer.
   */
  async forward(port: number, local: Duplex, opts: { signal?: AbortSignal } = {}): Promise<void> {
    const requestid = String(this.#requestId++);
    const headers = { port: String(port), requestid };
    let error: SpdyStream | undefined;
    let data: SpdyStream | undefined;
    try {
      error = await this.conn.createStream({ streamtype: 'error', ...headers }, { signal: opts.signal, fin: true });
      data = await this.conn.createStream({ streamtype: 'data', ...headers }, { signal: opts.signal });
    } catch (err) {
      error?.destroy();
      local.destroy();
      throw err;
    }
    const errorText = readText(error);
    const d = data;
    d.on('error', () => local.destroy());
    local.on('error', () => d.destroy());
    local.pipe(d); // local EOF → our FIN; the pod's server still answers
    d.pipe(local);
    // A local side that ended cleanly (half-close) still gets the answer; one that vanished does not.
    let localEnded = false;
    local.once('end', () => (localEnded = true));
    const finished = new Promise<'remote' | 'local'>((resolve) => {
      d.once('end', () => resolve('remote'));
      d.once('close', () => resolve('remote'));
      local.once('close', () => !localEnded && resolve('local'));
    });
    const onAbort = (): void => void d.destroy();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if ((await finished) === 'local') {
        // The local client went away: reset the pair so the runtime drops its side.
        d.destroy();
        error.destroy();
        return;
      }
      const text = (await errorText).trim();
      if (text) {
        local.destroy();
        throw new AgentError('ERR_UNAVAILABLE', `an error occurred forwarding to port ${port}: ${text}`);
      }
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the session (GOAWAY; the socket closes once open connections finish). */
  close(): void {
    this.conn.close();
  }

  destroy(): void {
    this.conn.destroy();
  }
}

function readText(s: SpdyStream): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    s.on('error', () => {});
    s.on('data', (c: Buffer) => {
      if (size < MAX_ERROR_BYTES) chunks.push(c);
      size += c.length;
    });
    const finish = (): void => resolve(Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BYTES));
    s.once('end', finish);
    s.once('close', finish);
  });
}

/** PortForward RPC + a session for one connection to `port` (tests, one-off use). */
export async function portForwardStream(
  client: CriClient,
  request: Pick<PortForwardRequest, 'podSandboxId'> & { port: number },
  conn: Duplex,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const { url } = await client.runtime.portForward({ podSandboxId: request.podSandboxId, port: [request.port] }, { signal: opts.signal });
  const session = await PortForwardSession.dial(url, opts);
  try {
    await session.forward(request.port, conn, opts);
  } finally {
    session.close();
  }
}
