/**
 * kubectl 1.32's port-forward: SPDY tunnelled through a WebSocket (subprotocol
 * `SPDY/3.1+portforward.k8s.io`; every binary message carries the next bytes of a SPDY/3.1
 * session). Upstream's API server unwraps the tunnel and speaks plain SPDY to the kubelet; so do
 * we, toward the agent:
 *
 *   kubectl ─WS(SPDY bytes)─▶ API server ─POST /portForward/<ns>/<p>, Upgrade: SPDY/3.1─▶ agent ─splice─▶ containerd
 *
 * 1. Send the agent the SPDY upgrade with the tunnelled protocols (prefix stripped).
 * 2. Read the agent's response head. 101: finish the WebSocket handshake with
 *    `SPDY/3.1+<protocol the agent chose>`; anything else reaches the client as it came.
 * 3. Relay: message payloads → agent socket, agent bytes → binary messages; each side pauses the
 *    other past {@link HIGH_WATER_BYTES}, so a slow end never grows our memory.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import type { RequestScope } from '../context.js';
import { StatusError } from '../status.js';
import { agentRequestHead, agentStreamPath, dialAgent } from './node-proxy.js';

export const TUNNEL_PREFIX = 'SPDY/3.1+';
const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;
const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;

/** The tunnelled protocols a WebSocket request offers (`SPDY/3.1+portforward.k8s.io` → `portforward.k8s.io`). */
export function tunnelledProtocols(req: IncomingMessage): string[] {
  return String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.startsWith(TUNNEL_PREFIX) && p.endsWith('.k8s.io'))
    .map((p) => p.slice(TUNNEL_PREFIX.length));
}

/** The protocol each pending handshake is to answer with (set just before handleUpgrade). */
const chosen = new WeakMap<IncomingMessage, string>();
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  // kubectl writes one message per SPDY write (≤ 32 KiB of data plus a frame header).
  maxPayload: 16 * 1024 * 1024,
  handleProtocols: (_offered, req) => chosen.get(req) ?? false,
});

/** Reads the agent's response head; the bytes after it are the first of the SPDY session. */
function readResponseHead(upstream: TLSSocket): Promise<{ head: Buffer; rest: Buffer; status: number; protocol: string }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > MAX_RESPONSE_HEAD_BYTES) fail(new Error('response head too large'));
        return;
      }
      upstream.off('data', onData);
      upstream.off('error', fail);
      upstream.off('end', onEnd);
      upstream.pause();
      const head = buf.subarray(0, end + 4);
      const text = head.toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      const protocol = /\r\nx-stream-protocol-version:\s*([^\r]*)/i.exec(text)?.[1]?.trim() ?? '';
      resolve({ head, rest: buf.subarray(end + 4), status, protocol });
    };
    const fail = (err: Error): void => reject(new StatusError(502, 'BadGateway', `the agent's answer to port-forward: ${err.message}`));
    const onEnd = (): void => fail(new Error('connection closed before a response'));
    upstream.on('data', onData);
    upstream.once('error', fail);
    upstream.once('end', onEnd);
  });
}

export async function proxyPortForwardTunnel(s: RequestScope, socket: Duplex, head: Buffer): Promise<void> {
  const protocols = tunnelledProtocols(s.req);
  const { target, path } = await agentStreamPath(s);
  const upstream = await dialAgent(s, target);
  const abort = (): void => void upstream.destroy();
  s.ctx.shutdown.addEventListener('abort', abort, { once: true });
  upstream.once('close', () => s.ctx.shutdown.removeEventListener('abort', abort));
  upstream.write(agentRequestHead(s, target, 'POST', path, { connection: ['Upgrade'], upgrade: ['SPDY/3.1'], 'x-stream-protocol-version': protocols }));
  let answer: Awaited<ReturnType<typeof readResponseHead>>;
  try {
    answer = await readResponseHead(upstream);
  } catch (err) {
    upstream.destroy();
    throw err;
  }
  if (answer.status !== 101) {
    // The agent's refusal (a Status) is the client's answer.
    socket.write(answer.head);
    if (answer.rest.length) socket.write(answer.rest);
    upstream.pipe(socket);
    upstream.resume();
    upstream.once('close', () => socket.destroy());
    socket.once('close', () => upstream.destroy());
    return;
  }
  chosen.set(s.req, `${TUNNEL_PREFIX}${answer.protocol || protocols[0]}`);
  // HACK(ws validates subprotocols as RFC 7230 tokens, and '/' is not a token character): the
  // request's list is replaced by a token before `ws` parses it; the 101 still names the real
  // protocol (handleProtocols above), which is what kubectl checks.
  s.req.headers['sec-websocket-protocol'] = 'spdy-tunnel';
  wss.handleUpgrade(s.req, socket, head, (ws) => relay(ws, upstream, answer.rest));
}

function relay(ws: WebSocket, upstream: TLSSocket, first: Buffer): void {
  const toClient = (chunk: Buffer): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(chunk, { binary: true }, () => {
      if (upstream.isPaused() && ws.bufferedAmount < LOW_WATER_BYTES) upstream.resume();
    });
    if (ws.bufferedAmount > HIGH_WATER_BYTES) upstream.pause();
  };
  ws.on('error', () => upstream.destroy());
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) return void ws.close(1003, 'binary messages only');
    if (!upstream.write(data)) {
      ws.pause();
      upstream.once('drain', () => ws.resume());
    }
  });
  ws.on('close', () => upstream.destroy());
  if (first.length) toClient(first);
  upstream.on('data', toClient);
  upstream.on('end', () => ws.close(1000));
  upstream.on('close', () => {
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
  });
  upstream.on('error', () => ws.terminate());
  upstream.resume();
}
