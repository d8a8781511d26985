/**
 * The HTTP upgrade that starts a Kubernetes SPDY stream session (apimachinery httpstream/spdy):
 *
 *   POST <url>                                   HTTP/1.1 101 Switching Protocols
 *   Connection: Upgrade                    ─▶    Connection: Upgrade
 *   Upgrade: SPDY/3.1                             Upgrade: SPDY/3.1
 *   X-Stream-Protocol-Version: v4.channel.k8s.io  X-Stream-Protocol-Version: v4.channel.k8s.io
 *   X-Stream-Protocol-Version: …  (one line each, in preference order)
 *
 * then SPDY/3.1 frames on the same socket. A server that shares none of the offered protocols
 * answers 403; containerd's one-time URLs answer 404 once used or expired.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { AgentError, abortError } from '@nodelet/base';
import { SpdyConnection } from './spdy/index.js';

export const HANDSHAKE_TIMEOUT_MS = 30_000;

/** The runtime may return a path only; crictl completes it against the kubelet's address. */
export function completeStreamUrl(url: string): string {
  return /^[a-z]+:\/\//i.test(url) ? url : `http://127.0.0.1:10250${url.startsWith('/') ? '' : '/'}${url}`;
}

export interface SpdyDialOptions {
  signal?: AbortSignal;
  /** Extra request headers (authorization toward a node API). */
  headers?: Record<string, string>;
  /** TLS options for https URLs. */
  tls?: https.RequestOptions;
}

export interface SpdySession {
  conn: SpdyConnection;
  /** The protocol the server chose from the offered ones. */
  protocol: string;
}

/**
 * Upgrades `url` to SPDY/3.1 offering `protocols`. Rejects with ERR_NOT_FOUND (404), ERR_FAILED_PRECONDITION
 * (403: no common protocol), ERR_UNAVAILABLE (anything else, with the server's text) or AbortError.
 */
export function dialSpdy(url: string, protocols: readonly string[], opts: SpdyDialOptions = {}): Promise<SpdySession> {
  if (opts.signal?.aborted) return Promise.reject(abortError(opts.signal.reason));
  const target = new URL(completeStreamUrl(url));
  const mod = target.protocol === 'https:' ? https : http;
  return new Promise<SpdySession>((resolve, reject) => {
    const req = mod.request(target, {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': [...protocols], ...opts.headers },
      timeout: HANDSHAKE_TIMEOUT_MS,
      ...(target.protocol === 'https:' ? opts.tls : {}),
    });
    const onAbort = (): void => {
      req.destroy();
      reject(abortError(opts.signal?.reason));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => opts.signal?.removeEventListener('abort', onAbort);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${HANDSHAKE_TIMEOUT_MS / 1000}s`)));
    req.on('error', (err) => {
      done();
      reject(new AgentError('ERR_UNAVAILABLE', `cannot open stream ${url}: ${err.message}`, { cause: err }));
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      done();
      socket.setNoDelay(true); // exec round trips are single keystrokes
      socket.setTimeout(0);
      if (head.length) socket.unshift(head);
      const protocol = String(res.headers['x-stream-protocol-version'] ?? '');
      resolve({ conn: new SpdyConnection(socket), protocol });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < 4096) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => {
        done();
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 4096).trim();
        const code = res.statusCode === 404 ? 'ERR_NOT_FOUND' : res.statusCode === 403 ? 'ERR_FAILED_PRECONDITION' : 'ERR_UNAVAILABLE';
        const hint = res.statusCode === 404 ? ' (the one-time URL expired or was used already)' : '';
        reject(new AgentError(code, `streaming server refused ${url}: HTTP ${res.statusCode}${hint}${text ? `: ${text}` : ''}`));
      });
    });
    req.end();
  });
}
