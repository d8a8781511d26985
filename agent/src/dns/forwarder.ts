/**
 * Sends queries for names outside the cluster zone to the node's upstream resolvers.
 *
 * Each exchange gets a fresh random message ID and, over UDP, its own socket (a random source
 * port), and only a reply from the upstream's address with that ID and the same question is
 * accepted, so a spoofed or late datagram is ignored. The client's transport is kept (UDP → UDP,
 * TCP → TCP, as CoreDNS's `forward` does); a truncated UDP reply is passed on and the client comes
 * back over TCP. Upstreams are tried in order, `attemptTimeoutMs` each, until one answers or
 * `deadlineMs` passes. At most `maxConcurrent` exchanges run at once; past that the caller answers
 * REFUSED (CoreDNS's max_concurrent).
 *
 *   exchange ──▶ upstream 1 ──timeout/error──▶ upstream 2 ──▶ … ──▶ ERR_UNAVAILABLE (SERVFAIL)
 */
import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { isIP, connect } from 'node:net';
import { AgentError, describeError, type Logger } from '@nodelet/base';
import { ipKey } from './names.js';
import { dnsPacket, withId } from './wire.js';

export interface Upstream {
  ip: string;
  port: number;
}

export const upstreamName = (u: Upstream): string => (u.ip.includes(':') ? `[${u.ip}]:${u.port}` : `${u.ip}:${u.port}`);

export interface ForwarderOptions {
  /** The current upstreams (read on every exchange; the list may change). */
  upstreams: () => readonly Upstream[];
  attemptTimeoutMs?: number;
  deadlineMs?: number;
  maxConcurrent?: number;
  /** Message IDs (0..65535); default crypto-random. */
  randomId?: () => number;
  log?: Logger;
  /** Told every attempt's outcome (metrics). */
  observe?: (to: string, rcode: number | 'error', seconds: number) => void;
}

export class Forwarder {
  readonly #o: ForwarderOptions;
  #inflight = 0;

  constructor(o: ForwarderOptions) {
    this.#o = o;
  }

  /** False when `maxConcurrent` exchanges are already running. */
  get hasCapacity(): boolean {
    return this.#inflight < (this.#o.maxConcurrent ?? 1000);
  }

  /**
   * Sends `query` (a whole message; its ID is replaced) and returns the raw reply carrying the
   * query's original ID. Throws ERR_UNAVAILABLE when no upstream answered (or none is known),
   * ERR_RESOURCE_EXHAUSTED when over `maxConcurrent`, AbortError when `signal` aborts.
   */
  async exchange(query: Buffer, transport: 'udp' | 'tcp', signal?: AbortSignal): Promise<Buffer> {
    if (!this.hasCapacity) throw new AgentError('ERR_RESOURCE_EXHAUSTED', 'too many queries in flight to the upstream resolvers');
    const upstreams = this.#o.upstreams();
    if (upstreams.length === 0) throw new AgentError('ERR_UNAVAILABLE', 'no upstream resolver is configured');
    const originalId = query.readUInt16BE(0);
    const deadline = performance.now() + (this.#o.deadlineMs ?? 5000);
    this.#inflight++;
    let last: unknown;
    try {
      for (const u of upstreams) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        signal?.throwIfAborted();
        const id = this.#o.randomId?.() ?? randomInt(0, 65536);
        const started = performance.now();
        try {
          const reply = await (transport === 'udp' ? udpExchange : tcpExchange)(u, withId(query, id), Math.min(left, this.#o.attemptTimeoutMs ?? 2000), signal);
          this.#o.observe?.(upstreamName(u), reply.readUInt16BE(2) & 0xf, (performance.now() - started) / 1000);
          return withId(reply, originalId);
        } catch (err) {
          if (signal?.aborted) throw err;
          last = err;
          this.#o.observe?.(upstreamName(u), 'error', (performance.now() - started) / 1000);
          this.#o.log?.debug({ upstream: upstreamName(u), err: describeError(err) }, 'Upstream resolver failed');
        }
      }
    } finally {
      this.#inflight--;
    }
    throw new AgentError('ERR_UNAVAILABLE', `no upstream resolver answered${last ? ` (last error: ${describeError(last)})` : ''}`, { cause: last });
  }
}

/** Whether `reply` answers `query`: same ID and the same question (names compared case-insensitively). */
function answers(query: Buffer, reply: Buffer): boolean {
  if (reply.length < 12 || reply.readUInt16BE(0) !== query.readUInt16BE(0) || !(reply.readUInt16BE(2) & 0x8000)) return false;
  try {
    const q = dnsPacket.decode(query).questions?.[0];
    const r = dnsPacket.decode(reply).questions?.[0];
    return !!q && !!r && q.type === r.type && q.name.toLowerCase() === r.name.toLowerCase();
  } catch {
    return false;
  }
}

type Finish = (err: unknown, reply?: Buffer) => void;

/**
 * One query and its answer over a socket `open` creates: settles once — on the reply, an error,
 * the deadline or an abort — and closes the socket whichever comes first.
 */
function exchange(u: Upstream, timeoutMs: number, signal: AbortSignal | undefined, open: (finish: Finish) => { close(): void }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let done = false;
    // `open` only reports through events, never synchronously, so `sock` is set before any finish.
    const finish: Finish = (err, reply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      sock.close();
      if (err) reject(err);
      else resolve(reply!);
    };
    const onAbort = (): void => finish(signal!.reason ?? new DOMException('aborted', 'AbortError'));
    const timer = setTimeout(() => finish(new AgentError('ERR_DEADLINE_EXCEEDED', `upstream ${upstreamName(u)} did not answer within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const sock = open(finish);
  });
}

function udpExchange(u: Upstream, query: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return exchange(u, timeoutMs, signal, (finish) => {
    const sock = createSocket(isIP(u.ip) === 6 ? 'udp6' : 'udp4');
    sock.on('error', (err) => finish(err));
    sock.on('message', (msg, rinfo) => {
      if (rinfo.port !== u.port || ipKey(rinfo.address) !== ipKey(u.ip) || !answers(query, msg)) return;
      finish(undefined, msg);
    });
    sock.send(query, u.port, u.ip, (err) => err && finish(err));
    return { close: () => sock.close() };
  });
}

function tcpExchange(u: Upstream, query: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return exchange(u, timeoutMs, signal, (finish) => {
    const sock = connect({ host: u.ip, port: u.port });
    let buf = Buffer.alloc(0);
    sock.on('error', (err) => finish(err));
    sock.on('close', () => finish(new AgentError('ERR_UNAVAILABLE', `upstream ${upstreamName(u)} closed the connection`)));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2) return;
      const len = buf.readUInt16BE(0);
      if (buf.length < 2 + len) return;
      const reply = buf.subarray(2, 2 + len);
      if (answers(query, reply)) finish(undefined, Buffer.from(reply));
      else finish(new AgentError('ERR_INTERNAL', `upstream ${upstreamName(u)} sent a reply that does not match the query`));
    });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(query.length);
    sock.write(Buffer.concat([len, query]));
    return { close: () => sock.destroy() };
  });
}
