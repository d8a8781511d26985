/**
 * Splices an upgrade request (SPDY/3.1 or WebSocket) from the API server to the runtime's
 * streaming URL, byte for byte: we send the request line and the upgrade headers to the runtime,
 * and from then on pipe both sockets. The runtime's answer (101 and frames, or a 4xx) reaches the
 * client untouched, so the protocol the two negotiate is theirs; kubelet proxies the same way
 * when the runtime serves streams itself.
 *
 * TCP carries the backpressure: `pipe` stops reading one socket while the other's buffer is full.
 */
import net from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { AgentError } from '@nodelet/base';
import { completeStreamUrl } from '@nodelet/cri-client';

/** Request headers that make up an upgrade handshake; hop-by-hop ones included on purpose. */
const FORWARDED = ['upgrade', 'connection', 'x-stream-protocol-version', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'];
const CONNECT_TIMEOUT_MS = 10_000;

export async function spliceUpgrade(o: { req: IncomingMessage; socket: Duplex; head: Buffer; url: string }): Promise<void> {
  const target = new URL(completeStreamUrl(o.url));
  if (target.protocol !== 'http:') throw new AgentError('ERR_FAILED_PRECONDITION', `cannot splice to a ${target.protocol} streaming URL`);
  const upstream = net.connect({ host: target.hostname, port: Number(target.port || 80) });
  upstream.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => upstream.destroy(new Error('connect timed out')), CONNECT_TIMEOUT_MS);
    upstream.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    upstream.once('error', (err) => {
      clearTimeout(timer);
      reject(new AgentError('ERR_UNAVAILABLE', `cannot reach the runtime's streaming server: ${err.message}`, { cause: err }));
    });
  });
  const lines = [`${o.req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`];
  for (const h of FORWARDED) for (const v of o.req.headersDistinct[h] ?? []) lines.push(`${h}: ${v}`);
  upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (o.head.length) upstream.write(o.head);
  if ('setNoDelay' in o.socket && typeof o.socket.setNoDelay === 'function') (o.socket as net.Socket).setNoDelay(true);
  o.socket.pipe(upstream);
  upstream.pipe(o.socket);
  const close = (): void => {
    o.socket.destroy();
    upstream.destroy();
  };
  upstream.on('error', close);
  upstream.on('close', close);
  o.socket.on('error', close);
  o.socket.on('close', close);
}
