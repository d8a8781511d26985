/**
 * Bridges an exec WebSocket from the API server's proxy (kubectl 1.32 negotiates
 * `v5.channel.k8s.io`) to the runtime's streaming server, which speaks `v4.channel.k8s.io`
 * (containerd 1.6 refuses v5 with 403; docs/reference/cri-and-crictl.md §4).
 *
 *   kubectl ─v5─▶ API server ─splice─▶ node API ─(this)─v4─▶ containerd streaming URL from CRI Exec
 *
 * Frames are `[channel byte][payload]` in both versions: 0 stdin, 1 stdout, 2 stderr, 3 status,
 * 4 resize pass through unchanged. v5's channel 255 (close stdin) has no v4 equivalent.
 * HACK(v4 has no half-close): a close-stdin frame is dropped; the command ends by itself.
 *
 * Backpressure both ways: when one side's send buffer passes {@link HIGH_WATER_BYTES}, the other
 * side is paused (ws stops reading its socket, so TCP pushes back to the process or to kubectl)
 * until the buffer is flushed below {@link LOW_WATER_BYTES}. A client that stops reading stalls
 * the command's output instead of growing the agent's memory.
 */
import WebSocket from 'ws';
import { describeError, type Logger } from '@nodelet/base';
import { toWebSocketUrl } from '@nodelet/cri-client';
import type { RuntimeService } from '../runtime/cri.js';

export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'] as const;
const CLOSE_STDIN = 255;
/** Unsent bytes on one side at which the other side is paused. */
export const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;

/**
 * Sends `frame` to `to`; pauses `from` while `to` has more than HIGH_WATER_BYTES unsent. Each
 * send's callback (the frame reached the socket) checks whether `from` may resume.
 */
function relay(frame: Buffer, to: WebSocket, from: WebSocket): void {
  if (to.readyState !== WebSocket.OPEN) return;
  to.send(frame, () => {
    if (from.isPaused && to.bufferedAmount < LOW_WATER_BYTES && from.readyState === WebSocket.OPEN) from.resume();
  });
  if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
}

const flag = (q: URLSearchParams, name: string, dflt: boolean): boolean => {
  const v = q.get(name);
  if (v === null) return dflt;
  return v === 'true' || v === '1';
};

export async function bridgeExec(o: { client: WebSocket; runtime: RuntimeService; containerId: string; query: URLSearchParams; log: Logger }): Promise<void> {
  const { client } = o;
  // A malformed frame from the client is an 'error' event; without a listener it would be thrown.
  client.on('error', (err) => o.log.debug({ err: describeError(err) }, 'Exec client stream failed'));
  const cmd = o.query.getAll('command');
  const fail = (message: string): void => {
    if (client.readyState !== WebSocket.OPEN) return;
    const status = JSON.stringify({ metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 });
    client.resume(); // read the peer's close frame
    client.send(Buffer.concat([Buffer.from([3]), Buffer.from(status)]));
    client.close(1000);
  };
  if (cmd.length === 0) return fail('exec: no command given (use ?command=…)');
  // Until the runtime stream is open, stdin waits here; past the high-water mark the client is
  // paused until it opens.
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const link: { upstream?: WebSocket } = {};
  client.on('message', (data: Buffer) => {
    const frame = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (frame[0] === CLOSE_STDIN) return;
    if (link.upstream?.readyState === WebSocket.OPEN) return relay(frame, link.upstream, client);
    early.push(frame);
    earlyBytes += frame.length;
    if (earlyBytes > HIGH_WATER_BYTES) client.pause();
  });
  // A paused side must read again to see the peer's close frame.
  client.on('close', () => {
    link.upstream?.resume();
    link.upstream?.close();
  });
  let url: string;
  try {
    const tty = flag(o.query, 'tty', false);
    const res = await o.runtime.exec({
      containerId: o.containerId,
      cmd,
      tty,
      stdin: flag(o.query, 'stdin', false) || flag(o.query, 'input', false),
      stdout: flag(o.query, 'stdout', true) || flag(o.query, 'output', false),
      stderr: tty ? false : flag(o.query, 'stderr', true),
    });
    url = res.url;
  } catch (err) {
    return fail(`exec failed: ${describeError(err)}`);
  }
  const upstream = new WebSocket(toWebSocketUrl(url), ['v4.channel.k8s.io']);
  link.upstream = upstream;
  upstream.on('open', () => {
    for (const f of early.splice(0)) relay(f, upstream, client);
    if (client.isPaused && upstream.bufferedAmount < LOW_WATER_BYTES) client.resume();
  });
  upstream.on('message', (data: Buffer) => relay(data, client, upstream));
  upstream.on('close', () => {
    client.resume();
    if (client.readyState === WebSocket.OPEN) client.close(1000);
  });
  upstream.on('error', (err) => {
    o.log.warn({ err: describeError(err) }, 'Runtime exec stream failed');
    if (client.readyState === WebSocket.OPEN) fail(`runtime stream: ${describeError(err)}`);
  });
}
